#!/usr/bin/env bash
# make bench-routing: the HTTP-level comparison of pod pickers (router-proxy
# balancing vs the Gateway API Inference Extension's EPP v1.5.0). A
# benchmark, not a test: it prints a table and asserts nothing.
#
# Needs root (a network namespace of its own), the envtest binaries
# (KUBEBUILDER_ASSETS, make envtest) and Go. EPP v1.5.0 is built from the Go
# module proxy in a scratch module under TOOLS_DIR (about 20 minutes on 2
# cores the first time; cached after). Extra arguments go to the harness,
# e.g. tools/bench-routing/run.sh -duration 30s -loads near-saturation=28.
# BEFORE=<rev> also builds the router-proxy at that commit of this
# repository (git archive, no fetch) and runs it as router-proxy-before.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TOOLS_DIR=${TOOLS_DIR:-$HOME/.cache/llmkube-compile}
KUBEBUILDER_ASSETS=${KUBEBUILDER_ASSETS:-$TOOLS_DIR/envtest-bin}
EPP_VERSION=v1.5.0
EPP_DIR=$TOOLS_DIR/epp-$EPP_VERSION
OUT=$TOOLS_DIR/bench-routing
NS=${BENCH_NETNS:-llmkr-bench-$$}
mkdir -p "$OUT" "$EPP_DIR"

if [[ $(id -u) != 0 ]]; then
	echo "bench-routing: needs root for its network namespace ($NS)" >&2
	exit 1
fi
[[ -x $KUBEBUILDER_ASSETS/kube-apiserver ]] || { echo "bench-routing: no kube-apiserver in $KUBEBUILDER_ASSETS (make envtest)" >&2; exit 1; }

# EPP v1.5.0 (the last release with cmd/epp) from the module proxy.
if [[ ! -x $EPP_DIR/epp ]]; then
	echo "building EPP $EPP_VERSION from the Go module proxy in $EPP_DIR (about 20 minutes on 2 cores)"
	(
		cd "$EPP_DIR"
		[[ -f go.mod ]] || printf 'module eppbuild\n\ngo 1.26\n' >go.mod
		GOWORK=off GOFLAGS=-mod=mod go get "sigs.k8s.io/gateway-api-inference-extension/cmd/epp@$EPP_VERSION"
		GOWORK=off GOFLAGS=-mod=mod go build -o epp.tmp sigs.k8s.io/gateway-api-inference-extension/cmd/epp
		mv epp.tmp epp
	)
fi
GIE_DIR=$(cd "$EPP_DIR" && GOWORK=off GOFLAGS=-mod=mod go list -m -f '{{.Dir}}' sigs.k8s.io/gateway-api-inference-extension)

echo "building router-proxy and the harness"
(cd "$ROOT" && go build -o "$OUT/router-proxy" ./cmd/router-proxy)
(cd "$ROOT/tools/bench-routing" && GOWORK=off go build -o "$OUT/bench-routing" .)
args=(-router-proxy "$OUT/router-proxy" -epp "$EPP_DIR/epp" -crds "$GIE_DIR/config/crd/bases")
if [[ -n ${BEFORE:-} ]]; then
	src=$(mktemp -d)
	git -C "$ROOT" archive "$BEFORE" | tar -x -C "$src"
	(cd "$src" && GOWORK=off go build -o "$OUT/router-proxy-before" ./cmd/router-proxy)
	rm -rf "$src"
	args+=(-router-proxy-before "$OUT/router-proxy-before" -pickers round-robin,router-proxy-before,router-proxy,epp)
fi

# A network namespace of our own: its loopback device carries 127.0.0.1
# (API server, EPP, the gateways) and the pods' TEST-NET-2 addresses. It has
# no other device, so no packet leaves it.
cleanup() { ip netns del "$NS" 2>/dev/null || true; }
trap cleanup EXIT
ip netns add "$NS"
ip -n "$NS" link set lo up
for i in 1 $(seq 10 17); do ip -n "$NS" addr add "198.51.100.$i/32" dev lo; done

work=$(mktemp -d)
echo "running in network namespace $NS (logs in $work)"
ip netns exec "$NS" env KUBEBUILDER_ASSETS="$KUBEBUILDER_ASSETS" \
	"$OUT/bench-routing" "${args[@]}" -work "$work" -json "$OUT/results.json" "$@"
echo "JSON lines: $OUT/results.json"
