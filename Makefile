# boxbench — see README.md. Every target works from a clean checkout.
GO        ?= go
# The version is version/VERSION's, with git's commits since its tag as build metadata
# (scripts/version.sh); `make VERSION=... COMMIT=...` overrides them.
VERSION   := $(shell scripts/version.sh)
COMMIT    := $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS   := -X github.com/boxbench/boxbench/version.linkedVersion=$(VERSION) -X github.com/boxbench/boxbench/version.linkedCommit=$(COMMIT)
# Statically linked (no C library needed), so the same binary runs in a client pod's image
# (boxbench images agent) and in any Linux box; -trimpath keeps this checkout's paths out of
# it, and `make release` compiles the same packages as `make build` (the build cache's).
GOBUILD   := CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)"
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: build release install uninstall setup images vm-images test test-short timing lint bench quickstart clean fuzz kube-build kube-up kube-down kube-status kube-check kube-multi-check swarm-up swarm-down swarm-status

# BIN: where the binary goes (the other targets run bin/boxbench).
BIN       ?= bin/boxbench
build:
	$(GOBUILD) -o $(BIN) ./cmd/boxbench

# Static binaries for linux/amd64 and linux/arm64, their manual pages and shell completions
# (from the command tree, cmd/gendocs) and SHA256SUMS, in DIST (scripts/release.sh;
# docs/ci.md, "Releases"; release.TestRelease checks them).
DIST      ?= dist
release:
	VERSION='$(VERSION)' GO='$(GO)' LDFLAGS='$(LDFLAGS)' DIST='$(DIST)' bash scripts/release.sh

# The binary, its manual pages and its bash, zsh and fish completions under PREFIX (in DESTDIR
# when packaging: `make install DESTDIR=/tmp/pkg PREFIX=/usr`).
PREFIX    ?= /usr/local
DESTDIR   ?=
GENDOCS   := out/gendocs
install: build
	rm -rf $(GENDOCS)
	CGO_ENABLED=0 $(GO) run -trimpath ./cmd/gendocs -version $(VERSION) -out $(GENDOCS) >/dev/null
	install -D -m 0755 bin/boxbench $(DESTDIR)$(PREFIX)/bin/boxbench
	install -d -m 0755 $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0644 $(GENDOCS)/man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -D -m 0644 $(GENDOCS)/completion/boxbench.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/boxbench
	install -D -m 0644 $(GENDOCS)/completion/_boxbench $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_boxbench
	install -D -m 0644 $(GENDOCS)/completion/boxbench.fish $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/boxbench.fish

# Removes what install put there, by name: only boxbench's files.
uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/boxbench $(DESTDIR)$(PREFIX)/share/man/man1/boxbench.1 \
	  $(DESTDIR)$(PREFIX)/share/man/man1/boxbench-*.1 \
	  $(DESTDIR)$(PREFIX)/share/bash-completion/completions/boxbench \
	  $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_boxbench \
	  $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/boxbench.fish

# What the quickstart needs (Redis natively and in Docker, debootstrap for its image, dockerd
# running, boxbench's Go modules): `make setup`. STEPS names scripts/setup.sh's steps instead
# (`make setup STEPS="lxc mariadb"`; all: every one, as `make test` and CI install); SPEC=FILE
# installs the steps that spec needs and builds its images (`boxbench setup FILE` prints both).
# Begins the timing log out/timing.log that `make test` prints at its end (docs/ci.md).
setup:
ifdef SPEC
	$(MAKE) build
	bash scripts/setup.sh $(STEPS) $$(./bin/boxbench setup --steps '$(SPEC)')
	args=$$(./bin/boxbench setup --images '$(SPEC)') && if [ -n "$$args" ]; then ./bin/boxbench images build $$args; fi
else
	bash scripts/setup.sh $(STEPS)
endif

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

# With NODES=N (3..9) these act on the multi-node cluster instead (scripts/kube-multi.sh; its
# own names and addresses, so both can run at once): `make kube-up NODES=3 CNI=vxlan`,
# `make kube-down NODES=3`. CNI is routes (default), vxlan or cilium (eBPF; a long first build).
# NAME=b acts on instance b, a second cluster beside the default one (own directories, bridge,
# addresses, lock): `make kube-down NAME=b`.
CNI ?= routes
kube-up:
	$(if $(NODES),bash scripts/kube-multi.sh up --nodes $(NODES) --cni $(CNI) $(if $(NAME),--name '$(NAME)'),bash scripts/kube-local.sh up)

kube-down:
	$(if $(NODES)$(NAME),bash scripts/kube-multi.sh down $(if $(NAME),--name '$(NAME)'),bash scripts/kube-local.sh down)

kube-status:
	$(if $(NODES)$(NAME),bash scripts/kube-multi.sh status $(if $(NAME),--name '$(NAME)'),bash scripts/kube-local.sh status)

# up, a Service reached from the host, down, and the host as before (needs `make images`).
kube-check: images
	bash scripts/kube-local-check.sh

# The multi-node cluster under each CNI: up, pods across nodes by IP, cluster DNS, down, the host
# as before (e2e.TestKubernetesMultiNode is what `make test` runs). CNI=cilium checks one CNI
# (default: routes, then vxlan); NAME=b checks instance b.
kube-multi-check:
	bash scripts/kube-multi-check.sh $(if $(NAME),--name '$(NAME)') $(if $(filter command line,$(origin CNI)),$(CNI))

# A Docker Swarm of NODES engines on this host (default 4: a 3-node ring and its client), each in
# namespaces of its own (scripts/swarm-multi.sh, docs/swarm.md); the host engine is untouched.
SWARM_NODES = $(if $(NODES),$(NODES),4)
swarm-up:
	bash scripts/swarm-multi.sh up --nodes $(SWARM_NODES)

swarm-down:
	bash scripts/swarm-multi.sh down

swarm-status:
	bash scripts/swarm-multi.sh status

# The whole suite: unit, fixture, golden, integration (real databases, real dockerd, the local
# Kubernetes cluster) and end to end, with BOXBENCH_CI=1: every "host lacks X" skip is a
# failure. scripts/test.sh builds the images, the Redis guest images and the Kubernetes
# components at once, brings the cluster up, takes it down afterwards unless it was already up,
# and ends by printing where the time went (docs/ci.md). It first installs every step of
# scripts/setup.sh (a no-op of seconds where `make setup STEPS=all` ran).
test: build
	bash scripts/setup.sh all
	bash scripts/test.sh

# The last run's report again: its phases, every package's and every slow test's wall time.
timing:
	$(GO) build -o bin/timing ./scripts/timing
	./bin/timing report -log out/timing.log -json out/test.json

test-short:
	$(GO) test -short ./...

# Each fuzz target for a bounded time (FUZZTIME each). Their seed corpora in testdata/fuzz also
# run as ordinary tests in `make test` and `make test-short`.
FUZZTIME ?= 20s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./spec
	$(GO) test -run '^$$' -fuzz '^FuzzParseList$$' -fuzztime $(FUZZTIME) ./internal/placement
	$(GO) test -run '^$$' -fuzz '^FuzzExtract$$' -fuzztime $(FUZZTIME) ./images/image/tarball
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
	rm -rf bin out dist
