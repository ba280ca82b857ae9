#!/usr/bin/env bash
# Installs the servers the tests run as real processes on loopback, from
# Debian's packages: redis-server (the router-proxy's shared budget store).
# Idempotent; uses sudo for apt-get when not root.
set -euo pipefail

log() { printf '[install-test-deps %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
if ((${#missing[@]} == 0)); then
  log "redis-server $(redis-server --version | awk '{print $3}')"
  exit 0
fi

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null 2>&1 || { echo "need root (or sudo) to apt-get install ${missing[*]}" >&2; exit 1; }
  SUDO=(sudo)
fi
log "installing ${missing[*]} from Debian's packages"
"${SUDO[@]}" apt-get update -q </dev/null >&2
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null >&2
# The package starts a system-wide server; the tests start their own.
"${SUDO[@]}" systemctl disable --now redis-server >/dev/null 2>&1 || true
command -v redis-server >/dev/null 2>&1 || { echo "redis-server installed but not on PATH" >&2; exit 1; }
log "redis-server $(redis-server --version | awk '{print $3}')"
