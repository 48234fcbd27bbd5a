# syntax=docker/dockerfile:1
#
# The agenthealth image from `make dist` archives alone: no build stage, no base image to
# pull, nothing run, for hosts whose registry mirrors nothing public. The context is the
# directory holding the archives (verify them first: `sha256sum -c SHA256SUMS`); TARGETARCH
# picks one.
#
#   docker buildx build -f archive.Dockerfile --platform linux/amd64,linux/arm64 -t agenthealth .
#   buildah bud -f archive.Dockerfile --platform linux/arm64 -t agenthealth .
#
# Its final stage is the Dockerfile's, line for line: the same image, in content.

ARG TARGETARCH

FROM scratch AS archive-amd64
ADD agenthealth-*-x86_64-unknown-linux-musl.tar.gz /archive/

FROM scratch AS archive-arm64
ADD agenthealth-*-aarch64-unknown-linux-musl.tar.gz /archive/

# A stage of this file, not an image (no tag to pin).
# hadolint ignore=DL3006
FROM archive-${TARGETARCH} AS archive
# Directories to copy, empty (nothing can run mkdir here): /var/lib, then the token directory.
WORKDIR /dirs/var/lib/agenthealth

# What the Dockerfile's build stage installs in /out, taken from the archive.
FROM scratch AS build
COPY --from=archive /archive/*/agenthealth /out/usr/local/bin/agenthealth
COPY --from=archive /dirs/var/lib/agenthealth/ /out/var/lib/
COPY --from=archive --chown=65532:65532 --chmod=0700 /dirs/var/lib/ /out/var/lib/
COPY --from=archive /archive/*/LICENSE /out/usr/share/doc/agenthealth/LICENSE

FROM scratch
COPY --from=build /out/ /
# Where a ConfigMap's config.yaml is mounted; token files go to a writable volume mounted
# at /var/lib/agenthealth (owned by 65532, mode 0700, when no volume replaces it).
WORKDIR /etc/agenthealth
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/agenthealth"]
CMD ["--help"]
