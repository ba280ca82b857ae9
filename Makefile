# llmkube-compile build entry points. Every target works on a fresh machine:
# tools are fetched through the Go module proxy or Debian packages and cached
# outside the repository.

SHELL := /usr/bin/env bash
TOOLS_DIR ?= $(HOME)/.cache/llmkube-compile
ENVTEST_ASSETS ?= $(TOOLS_DIR)/envtest-bin
CONTROLLER_GEN_VERSION := v0.23.0
CONTROLLER_GEN := go run sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)

.PHONY: all build test envtest generate golden render fmt vet

all: build

build:
	go build ./...

## render: compile the quickstart ModelRouter to its Proxy manifests.
render:
	go run ./cmd/llmkube-compile render -f examples/quickstart.yaml

## test: every test, including the real kube-apiserver (envtest) suites.
test: envtest
	KUBEBUILDER_ASSETS=$(ENVTEST_ASSETS) go test ./...

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

fmt:
	gofmt -w $$(git ls-files '*.go')

vet:
	go vet ./...

## generate-rbac: config/rbac/role.yaml and config/webhook/manifests.yaml from the controller's kubebuilder markers.
.PHONY: generate-rbac manifests
generate-rbac:
	$(CONTROLLER_GEN) rbac:roleName=manager-role paths=./controller/... output:rbac:artifacts:config=config/rbac
	$(CONTROLLER_GEN) webhook paths=./controller/... output:webhook:artifacts:config=config/webhook

manifests: generate generate-rbac

## bench-proxy: router-proxy overhead (stub upstream + load generator, direct vs proxied, 20 rules, audit on).
.PHONY: bench-proxy
bench-proxy:
	go run ./hack/bench-proxy
	go test ./runtime/ -run '^$$' -bench . -benchmem
