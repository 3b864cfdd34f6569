# archiver: `make demo` and `make test` do all set-up on a fresh Debian machine.
SWIFT ?= swift
PREFIX ?= /usr/local
APT_PACKAGES = pkg-config libpng-dev zlib1g-dev libssl-dev libarchive-dev libcurl4-openssl-dev

.PHONY: all deps build demo test sanitize install bench acceptance clean

all: build

# Installs the Debian packages the build needs, only when one is missing.
deps:
	@missing=""; \
	for p in $(APT_PACKAGES); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

build: deps
	$(SWIFT) build -c release

# Archives the 5000-record sample catalog offline through the built-in image server.
demo: build
	scripts/demo.sh "$$($(SWIFT) build -c release --show-bin-path)/archiver"

test: deps
	$(SWIFT) build
	$(SWIFT) test --disable-swift-testing

# Times archiver against curl, wget2 and aria2c over a loopback nginx (installs them if missing);
# prints a Markdown table and writes it to bench/results.md. BENCH_ROUNDS=3, BENCH_SCALE=0 skips
# the 100,000-record run.
bench: build
	scripts/bench.sh "$$($(SWIFT) build -c release --show-bin-path)/archiver"

# The test suite under ThreadSanitizer, then AddressSanitizer (XCTest's own objects show as
# leaks, so leak detection is off).
sanitize: deps
	$(SWIFT) test --disable-swift-testing --sanitize=thread --scratch-path .build/tsan
	ASAN_OPTIONS=detect_leaks=0 $(SWIFT) test --disable-swift-testing --sanitize=address --scratch-path .build/asan

# The issues' acceptance checks against the real catalog on a loopback nginx (about 30 s).
acceptance: build
	scripts/acceptance.sh "$$($(SWIFT) build -c release --show-bin-path)/archiver"

install: build
	install -D -m 755 "$$($(SWIFT) build -c release --show-bin-path)/archiver" $(DESTDIR)$(PREFIX)/bin/archiver

clean:
	rm -rf .build demo-bundle
