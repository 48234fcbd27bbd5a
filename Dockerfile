# syntax=docker/dockerfile:1
#
# agenthealth in an empty image: the static musl binary and nothing else (no shell, no
# libc, no CA bundle: it verifies TLS against the Mozilla roots built into it, or against
# SSL_CERT_FILE), run as 65532:65532.
#
#   docker build --build-arg AGENTHEALTH_COMMIT=$(git rev-parse --short=12 HEAD) -t agenthealth .
#   docker run --rm agenthealth ping http https://example.com/health
#
# The build stage runs the same release build as `make static` (make dist adds the path
# remapping that makes the binary reproducible). For stdio MCP servers, whose executables
# and interpreters this image cannot hold, see deploy/docker/stdio.Dockerfile.

ARG RUST_IMAGE=rust:1.95-bookworm

FROM ${RUST_IMAGE} AS build
WORKDIR /build/agenthealth
# The toolchain file first: rustup installs the pinned toolchain, then its musl target.
COPY rust-toolchain.toml ./
RUN rustup target add x86_64-unknown-linux-musl
COPY Cargo.toml Cargo.lock build.rs ./
# The musl linker settings (rust-lld, folded code, packed relocations, no unwind tables: see
# .ci/link-musl).
COPY .cargo/config.toml ./.cargo/config.toml
COPY .ci/link-musl .ci/no-unwind-tables.ld ./.ci/
COPY src ./src
# The test kit is a member of the workspace Cargo.toml declares: cargo reads its manifest to
# load the workspace, and the release build compiles none of it.
COPY tests/kit ./tests/kit
# No .git in the build context: the commit comes in as an argument (else "unknown").
ARG AGENTHEALTH_COMMIT=unknown
ENV AGENTHEALTH_COMMIT=${AGENTHEALTH_COMMIT}
RUN CC_x86_64_unknown_linux_musl=gcc cargo build --locked --release --target x86_64-unknown-linux-musl \
 && install -D -m 0755 target/x86_64-unknown-linux-musl/release/agenthealth /out/usr/local/bin/agenthealth \
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
