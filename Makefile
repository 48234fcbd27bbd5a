# agenthealth — build, test, static binary, demo, bench.
CARGO ?= cargo
## ARCH=x86_64 (default, native) or ARCH=aarch64 (cross-compiled: Debian's gcc-aarch64-linux-gnu
## compiles ring's C and drives rust-lld, see .ci/link-musl)
ARCH ?= x86_64
MUSL := $(ARCH)-unknown-linux-musl
STATIC_BIN := target/$(MUSL)/release/agenthealth
CC_x86_64 := gcc
CC_aarch64 := aarch64-linux-gnu-gcc
PREFIX ?= /usr/local

.PHONY: build test test-aarch64 interop-setup static dist dist-check image-check install demo demo-graph bench bench-smoke bench-size bench-binaries fuzz fmt clippy

build:
	$(CARGO) build --release

## test: the interop servers, formatting, lints, the TLS provider guard, and every test
## (unit, integration, interop). A test whose server is missing fails: it never passes unrun.
test: interop-setup
	$(CARGO) fmt --all -- --check
	@! grep -q '^name = "aws-lc' Cargo.lock || { echo "aws-lc is in Cargo.lock: TLS must use ring only (ureq default-features = false)" >&2; exit 1; }
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) test --workspace --all-targets

## interop-setup: the real MCP servers the interop tests start (idempotent, 1-3 s when up to date;
## node >= 20, npm and python3 >= 3.10), into $AGENTHEALTH_INTEROP_DIR or target/interop
interop-setup:
	.ci/interop-setup

## test-aarch64: the integration tests against the arm64 static binary, which the kernel hands
## to qemu-aarch64 (user-mode emulation, Debian's qemu-user-static; .ci/with-qemu); the tests
## themselves run natively. The few that cannot run there (they measure the emulator rather
## than the binary, or need uids the emulation's namespace lacks) are skipped by the list in
## .ci/emulation-skips, each with its reason; they run natively in `make test`.
test-aarch64: interop-setup
	$(MAKE) --no-print-directory static ARCH=aarch64
	.ci/test-emulated target/aarch64-unknown-linux-musl/release/agenthealth

## static: the statically linked musl release binary (a static PIE), and its size;
## ARCH=aarch64 cross-compiles the arm64 one (target/aarch64-unknown-linux-musl/release/)
static:
	@test -n "$(CC_$(ARCH))" || { echo "static: ARCH=$(ARCH): x86_64 or aarch64" >&2; exit 1; }
	@rustup target list --installed 2>/dev/null | grep -qx $(MUSL) || rustup target add $(MUSL)
	CC_$(subst -,_,$(MUSL))=$(CC_$(ARCH)) $(CARGO) build --release --target $(MUSL)
	@ls -l $(STATIC_BIN) | awk '{printf "%s: %d bytes (%.2f MiB)\n", $$9, $$5, $$5/1048576}'
	@test $$(stat -c %s $(STATIC_BIN)) -le 2500000 || { echo "static: over the 2.5 MB (2,500,000 bytes) budget" >&2; exit 1; }
	@file $(STATIC_BIN) | grep -o 'static-pie linked' || { echo "static: not a static PIE: $$(file $(STATIC_BIN))" >&2; exit 1; }

## dist: dist/agenthealth-<version>-{x86_64,aarch64}-unknown-linux-musl.tar.gz (static binary,
## README.md, LICENSE, man page, bash/zsh/fish completions) and one dist/SHA256SUMS for both,
## built reproducibly (.ci/build-release)
dist:
	.ci/dist

## dist-check: make dist in two fresh clones of HEAD at different paths; both archives must match
dist-check:
	.ci/dist-check

## image-check: the Dockerfile and deploy/docker/archive.Dockerfile give the same image for
## linux/amd64 and linux/arm64 (buildah, a local stand-in for the Rust base image; a few minutes)
image-check:
	.ci/image-check

## install: the release binary into $(DESTDIR)$(PREFIX)/bin (PREFIX=/usr/local by default)
install: build
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 target/release/agenthealth $(DESTDIR)$(PREFIX)/bin/agenthealth

## demo: start the bundled fake MCP server, run doctor against it, stop it
demo: build
	$(CARGO) build --release --example fake_mcp_server
	@bash examples/demo.sh target/release/agenthealth target/release/examples/fake_mcp_server

## demo-graph: the same with the dependency graph of examples/graph (ARGS="--format json")
demo-graph: build
	$(CARGO) build --release --example fake_mcp_server
	@bash examples/demo.sh target/release/agenthealth target/release/examples/fake_mcp_server graph $(ARGS)

## bench: every number of docs/performance.md from one run (static binary, RUNS=21 alternating
## rounds): ping mcp over the floor, across a 20 ms-each-way link (a tun link in a private network
## namespace), the 1,000-node graph, a fleet replica's /probe, keep-alive, ping beside busy loops,
## the sizes of both static binaries (x86_64, aarch64); writes docs/performance.svg
## (BENCH_ONLY=wan,fleet: only those sections).
## bench-smoke: every row of the bench once or twice, a second of wrk, no plot (BENCH_SMOKE=1):
## that the bench still runs against this binary, not what it measures (a step of .ci/run)
## bench-size: the two sizes and their targets alone
bench: bench-binaries
	$(CARGO) build --release --example fake_mcp_server --example floor_client --example latency_proxy
	@python3 examples/bench.py target/x86_64-unknown-linux-musl/release/agenthealth \
		target/release/examples/fake_mcp_server target/release/examples/floor_client \
		target/release/examples/latency_proxy target/aarch64-unknown-linux-musl/release/agenthealth

bench-smoke:
	@BENCH_SMOKE=1 $(MAKE) --no-print-directory bench

bench-size: bench-binaries
	@python3 examples/bench.py --sizes target/x86_64-unknown-linux-musl/release/agenthealth \
		target/aarch64-unknown-linux-musl/release/agenthealth

bench-binaries:
	$(MAKE) --no-print-directory static ARCH=x86_64
	$(MAKE) --no-print-directory static ARCH=aarch64

## fuzz: every fuzz target (fuzz/, cargo-fuzz on stable, --sanitizer none) for FUZZ_SECONDS
## each (default 10) from its seed corpus; needs `cargo install cargo-fuzz --locked`
fuzz:
	@bash fuzz/run.sh
