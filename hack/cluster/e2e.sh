#!/usr/bin/env bash
# make e2e-cluster: installs the cluster tools (cached), brings up the one-node
# cluster, imports the images `make images` built, runs the scenarios in
# test/cluster against it, and tears it down, restoring the host, on success,
# failure or interrupt.
#
#   KEEP_CLUSTER=1 make e2e-cluster    leave it up afterwards (debugging);
#                                      hack/cluster/cluster.sh down removes it
#   E2E_RUN=Regexp make e2e-cluster    run only the matching scenarios
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
TOOLS_DIR="${TOOLS_DIR:-${HOME}/.cache/llmkube-compile}"
export TOOLS_DIR
CLUSTER_TOOLS="${TOOLS_DIR}/cluster-v1.37.2"
export CLUSTER_TOOLS

log() { printf '[e2e-cluster %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

hack/cluster/install.sh "$CLUSTER_TOOLS"

# One cluster per machine: a second run (another checkout, a CI job beside a
# developer's) would tear this one down as "left behind". It waits its turn.
exec 8>/run/llmkube-e2e.lock
if ! flock -n 8; then
  log "another make e2e-cluster holds /run/llmkube-e2e.lock: waiting for it"
  flock 8
fi

before=""
# The scenarios' output; on failure its headlines end the log, after the
# components' logs, so a CI tail shows why a scenario failed.
testlog="$(mktemp)"
failures() {
  [[ -s $testlog ]] || return 0
  log "the failed scenarios and what they logged (one line each; the whole output is above):"
  awk '
    /^=== (RUN|CONT|NAME) / { name = $3; next }
    /^ +[A-Za-z0-9_]+\.go:[0-9]+: / { line[name, ++n[name]] = $0; next }
    /^ *--- FAIL: / {
      f = $3; print
      for (i = 1; i <= n[f]; i++) print substr(line[f, i], 1, 300)
    }' "$testlog" >&2
}
finish() {
  local rc=$?
  trap - EXIT INT TERM
  if ((rc != 0)); then
    log "FAILED (exit ${rc}); the last lines of each component's log:"
    for f in /run/llmkube-e2e/logs/*.log; do
      [[ -f $f ]] || continue
      echo "----- ${f}" >&2
      tail -n 25 "$f" >&2
    done
    failures
  fi
  rm -f "$testlog"
  if [[ "${KEEP_CLUSTER:-0}" == 1 ]]; then
    log "KEEP_CLUSTER=1: the cluster stays up ($(hack/cluster/cluster.sh env)); remove it with hack/cluster/cluster.sh down"
    exit "$rc"
  fi
  hack/cluster/cluster.sh down || { log "ERROR: teardown failed"; rc=1; }
  # The host as it was: everything up changed is back.
  if [[ -z $before ]]; then
    :
  elif ! diff -u "${before}" <(hack/cluster/cluster.sh hoststate) >&2; then
    log "ERROR: the host differs from before the cluster (lines above: - before, + after)"
    rc=1
  else
    log "host restored: sysctls, nftables, links, routes, paths, cgroups, mounts and processes as before"
  fi
  exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A cluster a crashed run left behind is removed before the host is recorded.
if [[ -e /run/llmkube-e2e || -e /var/lib/llmkube-e2e ]]; then hack/cluster/cluster.sh down; fi
before="$(mktemp)"
hack/cluster/cluster.sh hoststate >"$before"

started=$(date +%s)
PROJECT_IMAGES="${ROOT}/dist/images" hack/cluster/cluster.sh up
log "cluster up in $(( $(date +%s) - started ))s"
# shellcheck disable=SC1091
source "${CLUSTER_TOOLS}/images/refs.env"
export STUBMODEL_IMAGE
eval "export $(hack/cluster/cluster.sh env)"
export PATH="${TOOLS_DIR}/envtest-bin:${PATH}"
go test -tags e2ecluster ./test/cluster/ -count=1 -v -timeout 40m ${E2E_RUN:+-run "$E2E_RUN"} 2>&1 | tee "$testlog"
