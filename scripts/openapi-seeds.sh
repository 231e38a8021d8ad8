#!/usr/bin/env bash
# Writes the OpenAPI v3 documents of the built-in group versions an API server publishes into
# internal/kube/seeds/v<major>.<minor>/, gzipped and named by their content hash, for the
# provider to read from its binary instead of downloading them (internal/kube/openapi_seeds.go).
# Built-in group versions are those the server's APIService objects serve locally: no CRD's,
# no aggregated API's. A built-in document is the same on every API server of a minor version
# (its info names only the minor); the provider uses one only for the exact bytes it hashes to.
# Beside each document it writes the document's index (<name>.index.json: where each definition
# lies, which kinds it defines), which the provider reads it by instead of parsing it whole, and
# then writes the document again in gzip members of 128 KiB of it each, listed in the index, so
# that the provider decompresses only those holding what it reads (zcat still reads it whole).
#
#   scripts/openapi-seeds.sh                       # the local cluster (scripts/cluster-up.sh)
#   scripts/openapi-seeds.sh --kubeconfig FILE     # any other cluster, as kubectl reaches it: an
#                                                  # API server of another version (etcd and
#                                                  # kube-apiserver alone are enough)
set -euo pipefail
scripts="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=lib.sh
source "$scripts/lib.sh"

kubectl=("$scripts/kubectl.sh" "$@")
python=python3
command -v "$python" >/dev/null || { echo "openapi-seeds: python3 is needed to read the server's JSON" >&2; exit 1; }

minor="$("${kubectl[@]}" version -o json | "$python" -c 'import json,sys; v=json.load(sys.stdin)["serverVersion"]; print("v%s.%s" % (v["major"], v["minor"].rstrip("+")))')"
out="$REPO_ROOT/internal/kube/seeds/$minor"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"${kubectl[@]}" get apiservices -o json > "$work/apiservices.json"
"${kubectl[@]}" get --raw /openapi/v3 > "$work/index.json"
# One line per built-in document: its index name and the hash its URL carries.
"$python" - "$work/apiservices.json" "$work/index.json" > "$work/builtin.txt" <<'PY'
import json, sys, urllib.parse
services = json.load(open(sys.argv[1]))["items"]
local = set()
for s in services:
    spec = s["spec"]
    if spec.get("service") is None:
        group = spec.get("group", "")
        local.add("api/" + spec["version"] if group == "" else "apis/%s/%s" % (group, spec["version"]))
for name, entry in sorted(json.load(open(sys.argv[2]))["paths"].items()):
    if name in local:
        query = urllib.parse.urlparse(entry["serverRelativeURL"]).query
        print(name, urllib.parse.parse_qs(query)["hash"][0].upper())
PY
[ -s "$work/builtin.txt" ] || { echo "openapi-seeds: the server lists no built-in group version" >&2; exit 1; }

rm -rf "$out"
mkdir -p "$out"
while read -r name hash; do
  "${kubectl[@]}" get --raw "/openapi/v3/$name" > "$work/doc.json"
  got="$(sha512sum "$work/doc.json" | cut -d' ' -f1 | tr a-f A-F)"
  if [ "$got" != "$hash" ]; then
    echo "openapi-seeds: $name changed while being read (hash $got, index $hash); run again" >&2
    exit 1
  fi
  gzip -9 -n -c "$work/doc.json" > "$out/${name//\//_}-$hash.json.gz"
done < "$work/builtin.txt"
(cd "$REPO_ROOT" && go test ./internal/kube -count=1 -run '^TestSeeds_eachHasItsIndex$' -update-seed-indexes >/dev/null)
log "wrote $(wc -l < "$work/builtin.txt") documents of $minor to ${out#"$REPO_ROOT"/} ($(du -sh "$out" | cut -f1))"
