#!/usr/bin/env bash
# Installs the binaries that controller-runtime's envtest needs into DIR:
#
#   DIR/kube-apiserver  built from k8s.io/kubernetes (hack/kubernetes/build.sh)
#   DIR/kubectl         through the Go module proxy; cached, rebuilt only when
#                       the version or that module's go.mod/go.sum change.
#   DIR/etcd            a symlink to the etcd on PATH, else to Debian's
#                       etcd-server package (installed with apt-get).
#
# Usage: hack/install-envtest.sh DIR     then: KUBEBUILDER_ASSETS=DIR go test ./...
#
# Idempotent, non-interactive (CI=true, no stdin), meant to run as root on a
# fresh Debian machine; uses sudo for apt-get when not root.
set -euo pipefail

# kube-apiserver's etcd3 storage runs on etcd 3.4+ (Debian 12 ships 3.4.23); with
# etcd < 3.5.13 / 3.4.31 it only switches off features that need watch progress
# notifications (see k8s.io/apiserver/pkg/storage/feature).
ETCD_MIN_MINOR=4

log() { printf '[install-envtest %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[[ $# -eq 1 && -n "$1" ]] || die "usage: $0 DIR"

HACK_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mkdir -p "$1"
DIR="$(cd "$1" && pwd)"

if ! command -v go >/dev/null 2>&1 && [[ -x /usr/local/go/bin/go ]]; then
  export PATH="${PATH}:/usr/local/go/bin"
fi
command -v go >/dev/null 2>&1 || die "go is not on PATH"

# One install at a time per DIR (parallel `make` runs, several shells).
if command -v flock >/dev/null 2>&1; then
  exec 9>"${DIR}/.install.lock"
  flock 9
fi

# ------------------------------------------------- kube-apiserver and kubectl
# kubectl from the same release: the e2e tests install the project with
# `kubectl apply -k`, as users do.
"${HACK_DIR}/kubernetes/build.sh" "$DIR" kube-apiserver kubectl
apiserver="${DIR}/kube-apiserver"
kubectl="${DIR}/kubectl"
installed_version() { "$apiserver" --version 2>/dev/null | awk '{print $2}' || true; }

# -------------------------------------------------------------------------- etcd
etcd_link="${DIR}/etcd"
etcd_bin=""
if command -v etcd >/dev/null 2>&1; then
  # Resolved fully, so DIR/etcd itself (DIR on PATH) points at the real binary.
  etcd_bin="$(readlink -f "$(command -v etcd)")"
fi

if [[ -z "$etcd_bin" || ! -x "$etcd_bin" ]]; then
  log "etcd is not on PATH: installing Debian's etcd-server package"
  SUDO=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null 2>&1 || die "need root (or sudo) to apt-get install etcd-server"
    SUDO=(sudo -n)
  fi
  # Keep the package's init script from starting a system etcd daemon: envtest
  # starts its own on a random port. (Docker-style images already have one.)
  policy=/usr/sbin/policy-rc.d
  made_policy=0
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' | "${SUDO[@]}" tee "$policy" >/dev/null
    "${SUDO[@]}" chmod 0755 "$policy"
    made_policy=1
  fi
  cleanup_policy() { if [[ $made_policy == 1 ]]; then "${SUDO[@]}" rm -f "$policy"; fi; }
  trap cleanup_policy EXIT
  export DEBIAN_FRONTEND=noninteractive
  "${SUDO[@]}" apt-get update -q </dev/null >&2
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends etcd-server </dev/null >&2
  cleanup_policy
  trap - EXIT
  etcd_bin=/usr/bin/etcd
  [[ -x "$etcd_bin" ]] || die "etcd-server installed but ${etcd_bin} is missing"
fi

etcd_version="$("$etcd_bin" --version 2>/dev/null | awk '/^etcd Version:/ {print $3}')"
[[ -n "$etcd_version" ]] || die "cannot read the version of ${etcd_bin}"
IFS=. read -r etcd_major etcd_minor _ <<<"$etcd_version"
if [[ "$etcd_major" -ne 3 || "$etcd_minor" -lt $ETCD_MIN_MINOR ]]; then
  die "etcd ${etcd_version} at ${etcd_bin} is too old for kube-apiserver $(installed_version) (need 3.${ETCD_MIN_MINOR}+)"
fi
if [[ "$etcd_minor" -lt 5 ]]; then
  log "note: etcd ${etcd_version} predates 3.5; kube-apiserver $(installed_version) runs on it with" \
      "watch-progress-based features (consistent reads from cache) switched off"
fi
if [[ "$(readlink -f "$etcd_link" 2>/dev/null || true)" != "$etcd_bin" ]]; then
  ln -sfn "$etcd_bin" "$etcd_link"
fi

log "envtest assets in ${DIR}:"
log "  kube-apiserver $(installed_version)"
log "  kubectl $("$kubectl" version --client 2>/dev/null | awk '/Client Version/ {print $3}')"
log "  etcd ${etcd_version} -> ${etcd_bin}"
echo "KUBEBUILDER_ASSETS=${DIR}"
