#!/usr/bin/env bash
# Builds Kubernetes commands from k8s.io/kubernetes through the Go module
# proxy, with this folder's go.mod (the one place the Kubernetes version the
# tests run is pinned), into DIR:
#
#   hack/kubernetes/build.sh DIR kube-apiserver kubectl kubelet ...
#
# Each binary is stamped with the release (--version prints it) and cached:
# it is rebuilt only when the version, Go, or this module's go.mod/go.sum
# change. Go's build cache makes a second command of the same release cheap
# (they share most packages).
set -euo pipefail

K8S_VERSION=v1.37.2

log() { printf '[build-kubernetes %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[[ $# -ge 2 ]] || die "usage: $0 DIR COMMAND..."
MOD_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mkdir -p "$1"
DIR="$(cd "$1" && pwd)"
shift

want_stamp="$(
  {
    echo "k8s.io/kubernetes ${K8S_VERSION}"
    go env GOVERSION GOOS GOARCH
    cat "${MOD_DIR}/go.mod" "${MOD_DIR}/go.sum"
  } | sha256sum | cut -d' ' -f1
)"

pkg=k8s.io/component-base/version
ldflags="-s -w"
ldflags+=" -X ${pkg}.gitVersion=${K8S_VERSION}"
ldflags+=" -X ${pkg}.gitMajor=$(echo "${K8S_VERSION#v}" | cut -d. -f1)"
ldflags+=" -X ${pkg}.gitMinor=$(echo "${K8S_VERSION#v}" | cut -d. -f2)"
ldflags+=" -X ${pkg}.gitTreeState=clean"
ldflags+=" -X ${pkg}.gitCommit=k8s.io/kubernetes@${K8S_VERSION}"

todo=()
for cmd in "$@"; do
  stamp="${DIR}/.${cmd}.stamp"
  if [[ -x "${DIR}/${cmd}" && -f "$stamp" && "$(cat "$stamp")" == "$want_stamp" ]]; then
    log "${cmd} ${K8S_VERSION} is up to date in ${DIR}"
  else
    todo+=("$cmd")
  fi
done
((${#todo[@]} > 0)) || exit 0

log "building ${todo[*]} ${K8S_VERSION} from k8s.io/kubernetes (several minutes on 2 cores the first time)"
start=$(date +%s)
tmp="$(mktemp -d "${DIR}/.build.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
(
  cd "$MOD_DIR"
  # A separate module: no workspace, no vendor dir, go.sum is authoritative.
  export GOWORK=off GOFLAGS="-mod=readonly -buildvcs=false"
  go mod download
  pkgs=()
  for cmd in "${todo[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/${cmd}"); done
  go build -ldflags "$ldflags" -o "${tmp}/" "${pkgs[@]}"
)
for cmd in "${todo[@]}"; do
  mv -f "${tmp}/${cmd}" "${DIR}/${cmd}"
  echo "$want_stamp" >"${DIR}/.${cmd}.stamp"
done
log "built ${todo[*]} in $(( $(date +%s) - start ))s"
