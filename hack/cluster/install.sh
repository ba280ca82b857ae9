#!/usr/bin/env bash
# Installs what `make e2e-cluster` runs, from the Go module proxy and Debian's
# packages only, cached like envtest (kube-apiserver, kubectl and etcd come
# from hack/install-envtest.sh):
#
#   Debian:       containerd, runc, containernetworking-plugins (bridge,
#                 host-local, loopback), nftables, conntrack, iptables, curl
#   DIR/bin:      kubelet, kube-controller-manager, kube-scheduler, kube-proxy,
#                 kubeadm (hack/kubernetes/build.sh), crictl (cri-tools),
#                 coredns (hack/cluster/coredns)
#   DIR/images:   pause, coredns and stubmodel image archives (tools/cluster-images)
#
# Usage: hack/cluster/install.sh DIR     (default ~/.cache/llmkube-compile/cluster-v1.37.2)
set -euo pipefail

CRI_TOOLS_VERSION=v1.37.0

log() { printf '[install-cluster %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

HACK_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROOT="$(cd "${HACK_DIR}/.." && pwd)"
[[ $# -eq 1 && -n "$1" ]] || die "usage: $0 DIR"
mkdir -p "$1/bin" "$1/images"
DIR="$(cd "$1" && pwd)"
if ! command -v go >/dev/null 2>&1 && [[ -x /usr/local/go/bin/go ]]; then
  export PATH="${PATH}:/usr/local/go/bin"
fi

if command -v flock >/dev/null 2>&1; then
  exec 9>"${DIR}/.install.lock"
  flock 9
fi

# ---------------------------------------------------------------- Debian packages
packages=(containerd runc containernetworking-plugins nftables conntrack iptables curl)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} > 0)); then
  [[ $(id -u) -eq 0 ]] || die "need root to apt-get install ${missing[*]}"
  log "installing ${missing[*]} from Debian's packages"
  # Keep the packages' init scripts from starting a system containerd: the
  # cluster runs its own, with its own socket and state.
  policy=/usr/sbin/policy-rc.d
  made_policy=0
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 0755 "$policy" && made_policy=1
  fi
  trap '[[ $made_policy == 1 ]] && rm -f "$policy"' EXIT
  apt-get update -q </dev/null >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null >&2
fi

# ---------------------------------------------------------------- Kubernetes
"${HACK_DIR}/kubernetes/build.sh" "${DIR}/bin" kubelet kube-controller-manager kube-scheduler kube-proxy kubeadm

# ---------------------------------------------------------------- crictl
if [[ -x "${DIR}/bin/crictl" && "$("${DIR}/bin/crictl" --version 2>/dev/null | awk '{print $3}')" == "$CRI_TOOLS_VERSION" ]]; then
  log "crictl ${CRI_TOOLS_VERSION} is up to date"
else
  log "building crictl ${CRI_TOOLS_VERSION} from sigs.k8s.io/cri-tools"
  GOBIN="${DIR}/bin" GOFLAGS= GOWORK=off CGO_ENABLED=0 go install \
    -ldflags "-s -w -X sigs.k8s.io/cri-tools/pkg/version.Version=${CRI_TOOLS_VERSION}" \
    "sigs.k8s.io/cri-tools/cmd/crictl@${CRI_TOOLS_VERSION}"
fi

# ---------------------------------------------------------------- CoreDNS
log "building coredns (hack/cluster/coredns; cached by Go's build cache)"
(
  cd "${HACK_DIR}/cluster/coredns"
  GOWORK=off GOFLAGS="-mod=readonly -buildvcs=false" CGO_ENABLED=0 \
    go build -trimpath -ldflags "-s -w" -o "${DIR}/bin/coredns" .
)

# ---------------------------------------------------------------- images
log "building the pause, coredns and stubmodel images"
(cd "$ROOT" && GOFLAGS= go run ./tools/cluster-images -out "${DIR}/images" -coredns "${DIR}/bin/coredns" >&2)
log "cluster tools in ${DIR}"
