# archiver: `make demo` and `make test` do all set-up on a fresh Debian machine.
SWIFT ?= swift
PREFIX ?= /usr/local
APT_PACKAGES = pkg-config libpng-dev zlib1g-dev libjpeg62-turbo-dev libwebp-dev libgif-dev libssl-dev libarchive-dev \
	libcurl4-openssl-dev time
# The tests' independent PNG oracle: every fixture and seed's verdict is held to pngcheck's.
TEST_APT_PACKAGES = pngcheck
# The release binary carries the Swift runtime and Foundation in itself: it needs only the Debian
# libraries above (so `make install` copies one file that works without the toolchain), starts in
# about 10 ms instead of 15, and spends about 10% less CPU in a run (calls into the runtime need no
# PLT or dynamic TLS look-up). The tests build the usual way.
RELEASE = -c release --static-swift-stdlib
BIN = $$($(SWIFT) build $(RELEASE) --show-bin-path)/archiver
# The commit `archiver --version` names, `-dirty` with uncommitted changes; Package.swift reads it
# from the environment (a plain `swift build` says `unknown`), and only a small C file depends on it.
export ARCHIVER_COMMIT := $(shell c=$$(git rev-parse --short=12 HEAD 2>/dev/null) && { git diff --quiet HEAD -- 2>/dev/null || c=$$c-dirty; echo $$c; })

.PHONY: all deps build demo test sanitize fuzz install uninstall deb deb-check bench acceptance shard-acceptance refresh-acceptance folder-deps clean

all: build

# Installs the Debian packages the build (and, for test, the tests) need, only when one is missing.
deps:
	@missing=""; \
	for p in $(APT_PACKAGES) $(DEPS_EXTRA); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

build: deps
	$(SWIFT) build $(RELEASE)

# Archives the 5000-record sample catalog offline through the built-in image server.
demo: build
	scripts/demo.sh "$(BIN)"

# The folder check reads the index that build just wrote: a folder cycle fails the tests too.
test: DEPS_EXTRA = $(TEST_APT_PACKAGES)
test: deps
	$(SWIFT) build
	scripts/folder-deps.py
	$(SWIFT) test --disable-swift-testing

# Times archiver against curl, wget2 and aria2c over a loopback nginx (installs them if missing);
# prints a Markdown table and writes it to bench/results.md. BENCH_ROUNDS=3, BENCH_SCALE=0 skips
# the 100,000-record run. Then the far-server cases (50 ms late, HTTPS, 8 hosts; about 6 minutes
# at BENCH_WAN_ROUNDS=3), whose tables follow in the same file; BENCH_WAN=0 skips them.
bench: build
	scripts/bench.sh "$(BIN)"

# The test suite under ThreadSanitizer, then AddressSanitizer (XCTest's own objects show as
# leaks, so leak detection is off).
sanitize: deps
	$(SWIFT) test --disable-swift-testing --sanitize=thread --scratch-path .build/tsan
	ASAN_OPTIONS=detect_leaks=0 $(SWIFT) test --disable-swift-testing --sanitize=address --scratch-path .build/asan

# libFuzzer targets (the Fuzz/ package: the PNG, JPEG, WebP and GIF validators, the catalog parser, the journal line
# parser, the CSV/TSV reader, the manifest reader), each run FUZZ_SECONDS with AddressSanitizer and
# leak checks, no allocation over 64 MiB;
# see scripts/fuzz.sh. swiftc hands only the last -sanitize= option to the compiler (measured:
# with --sanitize=fuzzer --sanitize=address ArchiverCore got no coverage counters), hence the
# combined -Xswiftc flag; --sanitize still tells SwiftPM to link libFuzzer. Each product is
# built alone: building all would build the main package's executable for libFuzzer too.
FUZZ_SECONDS ?= 600
FUZZ_TARGETS ?= png jpeg webp gif catalog journal csv manifest
FUZZ_BUILD = -c release --sanitize=fuzzer --sanitize=address -Xswiftc -sanitize=fuzzer,address \
	-Xcc -fsanitize=fuzzer-no-link,address --package-path Fuzz --scratch-path .build/fuzz
fuzz: deps
	for target in $(FUZZ_TARGETS); do $(SWIFT) build $(FUZZ_BUILD) --product fuzz-$$target || exit 1; done
	scripts/fuzz.sh "$$($(SWIFT) build $(FUZZ_BUILD) --show-bin-path)" $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# The issues' acceptance checks against the real catalog on a loopback nginx (about 30 s), then
# those of --shard and merge: the Kubernetes and GitHub Actions examples played here, the Ray
# example run on a local Ray cluster (installed from PyPI into ~/.cache/archiver/ray-venv once; about
# 1.5 minutes in all, SKIP_RAY=1 leaves Ray out).
# Each script ends with "N passed, N failed"; all three run even when one fails, and the target
# fails at the end naming those that did.
acceptance: build
	@failed=""; \
	scripts/acceptance.sh "$(BIN)" || failed="$$failed acceptance.sh"; \
	scripts/shard-acceptance.sh "$(BIN)" || failed="$$failed shard-acceptance.sh"; \
	scripts/refresh-acceptance.sh "$(BIN)" || failed="$$failed refresh-acceptance.sh"; \
	scripts/gallery-check.py --archiver "$(BIN)" || failed="$$failed gallery-check.py"; \
	if [ -n "$$failed" ]; then echo "make acceptance: failed:$$failed"; exit 1; fi

# Only the checks of run --refresh and adopting a restored bundle.
refresh-acceptance: build
	scripts/refresh-acceptance.sh "$(BIN)"

# Only the checks of --shard and merge.
shard-acceptance: build
	scripts/shard-acceptance.sh "$(BIN)"

# Which folder of Sources/ArchiverCore/ uses which, read from the index the debug build writes
# (through the toolchain's libIndexStore.so); fails naming the files and declarations of any
# cycle. FOLDER_DEPS="--edges" lists what makes every edge.
folder-deps: deps
	$(SWIFT) build
	scripts/folder-deps.py $(FOLDER_DEPS)

# The binary, its man page and its completions (written by the binary from its option table);
# uninstall removes exactly these files.
INSTALLED = bin/archiver share/man/man1/archiver.1.gz share/bash-completion/completions/archiver \
	share/zsh/site-functions/_archiver share/fish/vendor_completions.d/archiver.fish
install: build
	install -D -m 755 "$(BIN)" $(DESTDIR)$(PREFIX)/bin/archiver
	install -d $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/bash-completion/completions \
		$(DESTDIR)$(PREFIX)/share/zsh/site-functions $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
	"$(BIN)" man | gzip -9n >$(DESTDIR)$(PREFIX)/share/man/man1/archiver.1.gz
	"$(BIN)" completions bash >$(DESTDIR)$(PREFIX)/share/bash-completion/completions/archiver
	"$(BIN)" completions zsh >$(DESTDIR)$(PREFIX)/share/zsh/site-functions/_archiver
	"$(BIN)" completions fish >$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/archiver.fish

uninstall:
	cd $(DESTDIR)$(PREFIX) && rm -f $(INSTALLED)

# archiver_<version>_<arch>.deb here, from the release binary: /usr/bin/archiver, archiver(1),
# the bash, zsh and fish completions; Depends from dpkg-shlibdeps (see scripts/make-deb.sh).
deb: build
	scripts/make-deb.sh "$(BIN)"

# CI's check of that package: unpacked into a scratch root, its binary runs a tiny archive.
deb-check: deb
	scripts/deb-check.sh "$$(ls -t archiver_*.deb | head -n1)"

clean:
	rm -rf .build demo-bundle archiver_*.deb
