#!/usr/bin/env bash
# Installs the peers and the load generator `make bench-proxy` measures the
# router-proxy against, from Debian's packages: nginx, HAProxy and wrk. The
# bench starts its own instances with generated configs; the packages'
# system services are left stopped. Uses sudo for apt-get when not root.
set -euo pipefail
missing=()
for c in nginx haproxy wrk; do
  command -v "$c" >/dev/null 2>&1 || [[ -x /usr/sbin/$c ]] || missing+=("$c")
done
((${#missing[@]} == 0)) && exit 0
SUDO=()
[[ $(id -u) -eq 0 ]] || SUDO=(sudo)
"${SUDO[@]}" apt-get update -q </dev/null >&2
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null >&2
for s in nginx haproxy; do "${SUDO[@]}" systemctl disable --now "$s" >/dev/null 2>&1 || true; done
