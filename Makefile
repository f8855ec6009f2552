# boxbench — see README.md. Every target works from a clean checkout.
GO        ?= go
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT    ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS   := -X github.com/boxbench/boxbench/version.Version=$(VERSION) -X github.com/boxbench/boxbench/version.Commit=$(COMMIT)
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: build setup images vm-images test test-short lint bench quickstart clean fuzz kube-build kube-up kube-down kube-status kube-check

# Statically linked (no C library needed), so the same binary runs in a client pod's image
# (boxbench images agent) and in any Linux box.
build:
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o bin/boxbench ./cmd/boxbench

# Installs the Debian packages, starts dockerd when it is not running, fetches Go modules.
setup:
	bash scripts/setup.sh

images: build
	./bin/boxbench images build

# The vm and vm-docker platforms' guest images (each database's root filesystem plus Debian's
# kernel and the QEMU guest agent; and with dockerd and the image loaded), cached by the hash of
# their inputs like the images. VMDBMS limits them to some databases (the tests need Redis's).
VMDBMS ?= redis,postgresql,mariadb
vm-images: build
	./bin/boxbench images build --vm --dbms $(VMDBMS)

# The local single-node Kubernetes cluster (docs/kubernetes.md): its components are built from
# source on first use (cached under /var/cache/boxbench/kube); `kube-down` removes everything else.
kube-build:
	bash scripts/kube-local.sh build

kube-up:
	bash scripts/kube-local.sh up

kube-down:
	bash scripts/kube-local.sh down

kube-status:
	bash scripts/kube-local.sh status

# up, a Service reached from the host, down, and the host as before (needs `make images`).
kube-check: images
	bash scripts/kube-local-check.sh

# The whole suite: unit, fixture, golden, integration (real databases, real dockerd, the local
# Kubernetes cluster) and end to end, with BOXBENCH_CI=1: every "host lacks X" skip is a
# failure. scripts/test.sh builds the images and the Kubernetes components (in parallel), brings
# the cluster up, and takes it down afterwards unless it was already up.
test: build
	bash scripts/test.sh

test-short:
	$(GO) test -short ./...

# Each fuzz target for a bounded time (FUZZTIME each). Their seed corpora in testdata/fuzz also
# run as ordinary tests in `make test` and `make test-short`.
FUZZTIME ?= 20s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./spec
	$(GO) test -run '^$$' -fuzz '^FuzzParseList$$' -fuzztime $(FUZZTIME) ./placement
	$(GO) test -run '^$$' -fuzz '^FuzzExtract$$' -fuzztime $(FUZZTIME) ./image/tarball
	$(GO) test -run '^$$' -fuzz '^FuzzOpen$$' -fuzztime $(FUZZTIME) ./results
	$(GO) test -run '^$$' -fuzz '^FuzzReply$$' -fuzztime $(FUZZTIME) ./driver/mongodb

lint:
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

bench:
	bash bench/loadgen/run.sh

# Each run gets a directory of its own, so running it again never touches earlier results.
# It needs only Redis's image: the others are built by `make images` or on a run's first use.
quickstart: build
	./bin/boxbench images build --dbms redis
	./bin/boxbench run examples/quickstart.yaml --out out/quickstart-$$(date +%Y%m%d-%H%M%S)

clean:
	rm -rf bin out
