# syntax=docker/dockerfile:1
#
# An application image with agenthealth inside, for an exec readiness probe
# (deploy/kubernetes/app-deployment.yaml): your MCP server's image plus the one static file,
# copied from the agenthealth image. Nothing else changes in the application's image.
#
#   docker build -f deploy/docker/app.Dockerfile --build-arg APP_IMAGE=registry.example.com/notes-mcp:1.4.2 .

ARG AGENTHEALTH_IMAGE=agenthealth:latest
ARG APP_IMAGE=registry.example.com/notes-mcp:1.4.2

FROM ${AGENTHEALTH_IMAGE} AS agenthealth

FROM ${APP_IMAGE}
COPY --from=agenthealth /usr/local/bin/agenthealth /usr/local/bin/agenthealth
