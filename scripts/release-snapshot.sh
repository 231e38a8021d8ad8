#!/usr/bin/env bash
# Builds a snapshot of the release artifacts into dist/ with goreleaser, unpublished, and proves
# them: every zip holds the registry-named binary (on Linux with its engine), SHA256SUMS lists exactly the zips and the
# manifest and verifies, the manifest says protocol 6.0, SHA256SUMS.sig is a valid signature of
# the final SHA256SUMS, and Terraform (or OpenTofu) installs the provider from the zip built for
# this machine, as it would from the registry, and reads its schema.
#
# The signature is made with a throwaway key generated for the run (the release key is never
# needed or touched); SNAPSHOT_SIGN=0, or a machine without gpg, skips signing.
#
#   scripts/release-snapshot.sh               this machine's OS and architecture only
#   SNAPSHOT_TARGETS="linux_amd64 darwin_arm64" scripts/release-snapshot.sh
#   SNAPSHOT_TARGETS=all scripts/release-snapshot.sh   the whole matrix of .goreleaser.yml (slow)
#
#   scripts/release-snapshot.sh --check-only  goreleaser check, nothing built
set -euo pipefail
scripts="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=lib.sh
source "$scripts/lib.sh"
cd "$REPO_ROOT"

goreleaser="$("$scripts/build-tools.sh" goreleaser)"
"$goreleaser" check --config .goreleaser.yml
[ "${1:-}" = --check-only ] && exit 0
[ "$#" -eq 0 ] || { echo "usage: $0 [--check-only]" >&2; exit 2; }

work="$(mktemp -d)"
cleanup() {
  [ -n "${GNUPGHOME:-}" ] && gpgconf --kill gpg-agent >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT

host="$(go env GOOS)_$(go env GOARCH)"
targets="${SNAPSHOT_TARGETS:-$host}"
read -r -a target_list <<<"$targets"
config=.goreleaser.yml
if [ "$targets" != all ]; then
  # Narrow the builds to the requested targets; everything else stays as the release does it.
  # The front and the engine are built for Linux, the full provider alone for the other systems; a
  # build none of whose targets was asked for is skipped.
  config="$work/goreleaser.yml"
  linux=() other=()
  for target in "${target_list[@]}"; do
    case "$target" in linux_*) linux+=("$target") ;; *) other+=("$target") ;; esac
  done
  list_of() { [ "$#" -eq 0 ] && return; local l; l="$(printf '"%s", ' "$@")"; echo "[${l%, }]"; }
  awk -v linux="$(list_of "${linux[@]}")" -v other="$(list_of "${other[@]}")" '
    { print }
    /^  - id: (provider|front|engine)$/ {
      list = ($3 == "provider") ? other : linux
      if (list == "") print "    skip: true"; else print "    targets: " list
      seen[$3] = 1
    }
    END { if (!seen["provider"] || !seen["front"] || !seen["engine"]) exit 1 }' .goreleaser.yml >"$config" ||
    { echo "no builds with ids provider, front and engine in .goreleaser.yml" >&2; exit 1; }
fi
skip=sign,publish
sign=false
if [ "${SNAPSHOT_SIGN:-1}" != 0 ] && command -v gpg >/dev/null 2>&1; then
  # Sign exactly as a release does, with a key that exists only for this run.
  export GNUPGHOME="$work/gnupg"
  mkdir -m 700 "$GNUPGHOME"
  gpg --batch --quiet --passphrase '' --quick-gen-key "gitlabk8s snapshot <snapshot@invalid>" rsa2048 sign 1d 2>/dev/null
  GPG_FINGERPRINT="$(gpg --list-keys --with-colons 2>/dev/null | awk -F: '$1 == "fpr" { print $10; exit }')"
  export GPG_FINGERPRINT
  skip=publish
  sign=true
fi
log "goreleaser snapshot for targets: $targets (skipping $skip)"
"$goreleaser" release --config "$config" --snapshot --clean --skip="$skip"

# metadata.json says which version the snapshot got.
version="$(sed -n 's/.*"version":"\([^"]*\)".*/\1/p' dist/metadata.json)"
[ -n "$version" ] || { echo "dist/metadata.json names no version" >&2; exit 1; }
project=terraform-provider-gitlabk8s
prefix="dist/${project}_${version}"

# The manifest is uploaded next to the zips by the release; lay it out the same way here.
cp terraform-registry-manifest.json "${prefix}_manifest.json"
grep -q '"protocol_versions": *\["6.0"\]' "${prefix}_manifest.json" || {
  echo "terraform-registry-manifest.json must declare protocol_versions [\"6.0\"], the protocol main.go serves" >&2
  exit 1
}

sums="${prefix}_SHA256SUMS"
[ -f "$sums" ] || { echo "$sums is missing" >&2; exit 1; }
(cd dist && sha256sum --check --strict "$(basename "$sums")") >"$work/sums.log" || {
  cat "$work/sums.log" >&2
  exit 1
}
grep -q "  ${project}_${version}_manifest.json\$" "$sums" || { echo "$sums does not cover the manifest" >&2; exit 1; }
# The registries expect the zips and the manifest, nothing else (a signature listed in the file it
# signs would make that signature invalid).
if grep -v -E "  ${project}_${version}_([a-z0-9]+_[a-z0-9]+\.zip|manifest\.json)\$" "$sums"; then
  echo "$sums lists files other than the zips and the manifest (above)" >&2
  exit 1
fi
if $sign; then
  gpg --batch --verify "${sums}.sig" "$sums" 2>"$work/verify.log" || {
    cat "$work/verify.log" >&2
    echo "${sums}.sig is not a valid signature of $sums" >&2
    exit 1
  }
  log "$(basename "$sums").sig verifies against the final $(basename "$sums")"
fi

zips=(dist/"${project}_${version}"_*.zip)
[ -e "${zips[0]}" ] || { echo "no zip in dist/" >&2; exit 1; }
for zip in "${zips[@]}"; do
  # On Linux the front and its engine, elsewhere the full provider alone (.goreleaser.yml).
  case "$zip" in
  *_linux_*) want="$(printf '%s\n' "gitlabk8s-engine_v${version}" "${project}_v${version}")" ;;
  *_windows_*) want="${project}_v${version}.exe" ;;
  *) want="${project}_v${version}" ;;
  esac
  binaries="$(unzip -Z1 "$zip" | sort)"
  [ "$binaries" = "$want" ] || { echo "$zip holds '$binaries', not '$want'" >&2; exit 1; }
  grep -q "  $(basename "$zip")\$" "$sums" || { echo "$sums does not cover $zip" >&2; exit 1; }
done
if [ "$targets" != all ]; then
  for target in "${target_list[@]}"; do
    [ -f "${prefix}_${target}.zip" ] || { echo "no zip for $target" >&2; exit 1; }
  done
fi

# Install the host's zip the way `init` installs from a registry (a packed filesystem mirror holds
# the release zips as they are) and read the schema through the plugin protocol.
host_zip="${prefix}_${host}.zip"
if [ -f "$host_zip" ]; then
  tf="$("$scripts/ensure-terraform.sh")"
  for registry in registry.terraform.io registry.opentofu.org; do
    mkdir -p "$work/mirror/$registry/gitlabk8s/gitlabk8s"
    cp "$host_zip" "$work/mirror/$registry/gitlabk8s/gitlabk8s/"
  done
  cat >"$work/cli.tfrc" <<EOF
provider_installation {
  filesystem_mirror {
    path    = "$work/mirror"
    include = ["registry.terraform.io/gitlabk8s/gitlabk8s", "registry.opentofu.org/gitlabk8s/gitlabk8s"]
  }
}
EOF
  mkdir -p "$work/config"
  cat >"$work/config/main.tf" <<EOF
terraform {
  required_providers {
    gitlabk8s = {
      source  = "gitlabk8s/gitlabk8s"
      version = "$version"
    }
  }
}
EOF
  (
    cd "$work/config"
    export TF_CLI_CONFIG_FILE="$work/cli.tfrc" TF_IN_AUTOMATION=1 CHECKPOINT_DISABLE=1
    unset TF_PLUGIN_CACHE_DIR
    "$tf" init -input=false -no-color >"$work/init.log" 2>&1 || { cat "$work/init.log" >&2; exit 1; }
    "$tf" providers schema -json >"$work/schema.json"
  )
  grep -q '"gitlabk8s_cluster"' "$work/schema.json" || {
    echo "the provider installed from $host_zip serves no gitlabk8s_cluster schema" >&2
    exit 1
  }
  log "$(basename "$tf") installed $(basename "$host_zip") from a mirror and read its schema"
fi

log "snapshot artifacts in dist/:"
(cd dist && ls -1 "${project}_${version}"_*) >&2
