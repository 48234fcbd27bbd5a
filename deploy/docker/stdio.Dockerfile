# syntax=docker/dockerfile:1
#
# agenthealth with a trusted stdio MCP server: a stdio target's server runs inside the
# probe's container, so the image must hold its executable and whatever that needs (here a
# Python interpreter, which the empty agenthealth image cannot). The server is pinned and
# installed at build time; agenthealth starts exactly the configured command, no shell.
#
#   docker build -f deploy/docker/stdio.Dockerfile -t agenthealth-stdio .
#   docker run --rm agenthealth-stdio check /etc/agenthealth/config.yaml

ARG AGENTHEALTH_IMAGE=agenthealth:latest

FROM ${AGENTHEALTH_IMAGE} AS agenthealth

FROM python:3.12-slim-bookworm
RUN pip install --no-cache-dir --no-compile mcp-server-time==2026.10.19 \
 && install -d -m 0700 -o 65532 -g 65532 /var/lib/agenthealth
COPY --from=agenthealth /usr/local/bin/agenthealth /usr/local/bin/agenthealth
COPY deploy/docker/stdio.yaml /etc/agenthealth/config.yaml
WORKDIR /etc/agenthealth
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/agenthealth"]
CMD ["check", "/etc/agenthealth/config.yaml"]
