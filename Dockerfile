# syntax=docker/dockerfile:1
#
# agenthealth in an empty image: the static musl binary and nothing else (no shell, no
# libc, no CA bundle: it verifies TLS against the Mozilla roots built into it, or against
# SSL_CERT_FILE), run as 65532:65532.
#
#   docker buildx build --platform linux/amd64,linux/arm64 \
#     --build-arg AGENTHEALTH_COMMIT=$(git rev-parse --short=12 HEAD) -t agenthealth .
#   docker run --rm agenthealth ping http https://example.com/health
#
# The build stage runs make dist's release build (.ci/build-release): the image holds the
# archive's binary; deploy/docker/archive.Dockerfile makes this same image from the archives
# alone. For stdio MCP servers, whose executables and interpreters this image cannot hold,
# see deploy/docker/stdio.Dockerfile.

ARG RUST_IMAGE=rust:1.95-bookworm

# The build stage runs on the build machine's own platform and cross-compiles for the target
# one (TARGETARCH amd64 or arm64): no emulation, whichever the two are.
FROM --platform=$BUILDPLATFORM ${RUST_IMAGE} AS build
ARG TARGETARCH
WORKDIR /build/agenthealth
# ring's C compiler for the target: the native gcc under its triple name, or Debian's cross
# gcc (bookworm's, as the RUST_IMAGE tag fixes it: no version pin of its own).
# hadolint ignore=DL3008
RUN set -eu; \
    case "$TARGETARCH" in \
      amd64) arch=x86_64 gcc=gcc-x86-64-linux-gnu ;; \
      arm64) arch=aarch64 gcc=gcc-aarch64-linux-gnu ;; \
      *) echo "TARGETARCH $TARGETARCH: only amd64 and arm64" >&2; exit 1 ;; \
    esac; \
    echo "$arch-unknown-linux-musl" > /triple; \
    if ! command -v "$arch-linux-gnu-gcc" > /dev/null; then \
      apt-get update && apt-get install -y --no-install-recommends "$gcc" "libc6-dev-$TARGETARCH-cross" \
      && rm -rf /var/lib/apt/lists/*; \
    fi
# The toolchain file first: rustup installs the pinned toolchain, then the target.
COPY rust-toolchain.toml ./
RUN rustup target add "$(cat /triple)"
COPY Cargo.toml Cargo.lock build.rs ./
# The musl linker settings (rust-lld, folded code, packed relocations, no unwind tables: see
# .ci/link-musl) and the release build make dist uses (see .ci/build-release).
COPY .cargo/config.toml ./.cargo/config.toml
COPY .ci/link-musl .ci/no-unwind-tables.ld .ci/build-release ./.ci/
COPY src ./src
# The test kit is a member of the workspace Cargo.toml declares: cargo reads its manifest to
# load the workspace, and the release build compiles none of it.
COPY tests/kit ./tests/kit
# No .git in the build context: the commit comes in as an argument (else "unknown").
ARG AGENTHEALTH_COMMIT=unknown
ENV AGENTHEALTH_COMMIT=${AGENTHEALTH_COMMIT}
RUN bin=$(.ci/build-release "$(cat /triple)") \
 && install -D -m 0755 "$bin" /out/usr/local/bin/agenthealth \
 && install -d -m 0700 -o 65532 -g 65532 /out/var/lib/agenthealth
COPY LICENSE /out/usr/share/doc/agenthealth/LICENSE

FROM scratch
COPY --from=build /out/ /
# Where a ConfigMap's config.yaml is mounted; token files go to a writable volume mounted
# at /var/lib/agenthealth (owned by 65532, mode 0700, when no volume replaces it).
WORKDIR /etc/agenthealth
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/agenthealth"]
CMD ["--help"]
