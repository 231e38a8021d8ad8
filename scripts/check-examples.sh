#!/usr/bin/env bash
# Checks every example the docs show: `fmt -check -recursive examples`, then `init` and `validate`
# in each folder that holds .tf files, with the provider built from this checkout and installed
# from a local filesystem mirror, so it runs offline. Examples are copied to a scratch folder
# first and nothing is written next to them.
#
# Snippets that leave out the `terraform { required_providers }` block (a resource's example on
# its docs page) are validated as if they sat next to examples/provider/provider.tf, which has it.
# Examples that only configure the provider get a data source that uses it, because `validate`
# skips the configuration of a provider nothing uses.
set -euo pipefail
scripts="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=lib.sh
source "$scripts/lib.sh"
cd "$REPO_ROOT"

tf="$("$scripts/ensure-terraform.sh")"
log "checking examples with $tf"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$tf" fmt -check -recursive -diff examples || {
  echo "examples are not formatted: run '$(basename "$tf") fmt -recursive examples'" >&2
  exit 1
}

TF_CLI_CONFIG_FILE="$("$scripts/provider-mirror.sh" "$work/mirror")"
export TF_CLI_CONFIG_FILE
# Providers are copied from the mirror into each example; a shared plugin cache would only hide
# what a fresh `init` does.
unset TF_PLUGIN_CACHE_DIR
export TF_IN_AUTOMATION=1 CHECKPOINT_DISABLE=1

mapfile -t folders < <(find examples -name '*.tf' -not -path '*/.terraform/*' -printf '%h\n' | sort -u)
[ "${#folders[@]}" -gt 0 ] || { echo "no examples found under examples/" >&2; exit 1; }

failed=()
for folder in "${folders[@]}"; do
  copy="$work/examples/${folder//\//_}"
  mkdir -p "$copy"
  find "$folder" -maxdepth 1 -type f -exec cp {} "$copy/" \;
  # Keep sub-folders too: a module call or a chart path may point into them.
  find "$folder" -mindepth 1 -maxdepth 1 -type d ! -name .terraform -exec cp -r {} "$copy/" \;
  if ! grep -qs required_providers "$copy"/*.tf; then
    cat > "$copy/zz_required_providers.tf" <<'EOF'
terraform {
  required_providers {
    gitlabk8s = {
      source = "gitlabk8s/gitlabk8s"
    }
  }
}
EOF
  fi
  # `validate` checks a provider block only for a provider something uses: give provider-only
  # examples a data source, so their settings are checked against the schema too.
  if ! grep -qsE '^(resource|data) "gitlabk8s_' "$copy"/*.tf; then
    echo 'data "gitlabk8s_cluster" "example_check" {}' >"$copy/zz_uses_provider.tf"
  fi
  # -backend=false: an example's backend (GitLab's HTTP state) is not there to talk to.
  if (cd "$copy" && "$tf" init -backend=false -input=false -no-color >"$copy.init.log" 2>&1 &&
    "$tf" validate -no-color >"$copy.validate.log" 2>&1); then
    log "ok      $folder"
  else
    log "FAILED  $folder"
    cat "$copy.init.log" "$copy.validate.log" 2>/dev/null | sed 's/^/    /' >&2
    failed+=("$folder")
  fi
done

if [ "${#failed[@]}" -gt 0 ]; then
  echo "${#failed[@]} of ${#folders[@]} examples failed: ${failed[*]}" >&2
  exit 1
fi
log "all ${#folders[@]} examples are formatted and valid"
