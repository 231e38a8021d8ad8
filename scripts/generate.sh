#!/usr/bin/env bash
# Generates the registry docs in docs/ with tfplugindocs, from templates/, examples/ and the schema
# of the provider built from this checkout, and the schema answer the provider's front carries
# (internal/front/schema.pb, written by scripts/frontschema).
#
#   scripts/generate.sh           rewrite internal/front/schema.pb and docs/
#   scripts/generate.sh --check   generate into a scratch copy and fail when either differs from it,
#                                 then run tfplugindocs' own validation; the tree is left untouched
#
# The schema is read with `terraform providers schema -json` (or tofu's) from the provider
# installed out of a local filesystem mirror, so generation runs offline with either CLI and
# tfplugindocs never builds or downloads anything itself.
set -euo pipefail
scripts="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=lib.sh
source "$scripts/lib.sh"
cd "$REPO_ROOT"

check=false
case "${1:-}" in
"") ;;
--check) check=true ;;
*) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

tfplugindocs="$("$scripts/build-tools.sh" tfplugindocs)"
tf="$("$scripts/ensure-terraform.sh")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# First the front's schema answer: the docs below read the schema through the front.
go run ./scripts/frontschema "$work/schema.pb"
if $check; then
  cmp -s "$work/schema.pb" internal/front/schema.pb || {
    echo "internal/front/schema.pb is not the provider's schema answer: run make generate" >&2
    exit 1
  }
elif ! cmp -s "$work/schema.pb" internal/front/schema.pb; then
  cp "$work/schema.pb" internal/front/schema.pb
  log "wrote internal/front/schema.pb"
fi

TF_CLI_CONFIG_FILE="$("$scripts/provider-mirror.sh" "$work/mirror")"
export TF_CLI_CONFIG_FILE TF_IN_AUTOMATION=1 CHECKPOINT_DISABLE=1
unset TF_PLUGIN_CACHE_DIR

log "reading the provider schema with $tf"
mkdir -p "$work/schema"
cat > "$work/schema/main.tf" <<'EOF'
terraform {
  required_providers {
    gitlabk8s = {
      source = "gitlabk8s/gitlabk8s"
    }
  }
}
EOF
(cd "$work/schema" && "$tf" init -input=false -no-color >init.log 2>&1) || {
  cat "$work/schema/init.log" >&2
  exit 1
}
# tfplugindocs looks the provider up by its short name; Terraform and OpenTofu key it by their own
# registry host, so name it the one way both give the same docs.
(cd "$work/schema" && "$tf" providers schema -json) |
  sed -E 's#"registry\.(terraform\.io|opentofu\.org)/gitlabk8s/gitlabk8s":#"gitlabk8s":#' >"$work/schema.json"
grep -q '"gitlabk8s":' "$work/schema.json" || { echo "the provider schema has no gitlabk8s provider" >&2; exit 1; }

# generate <provider dir>: tfplugindocs with this project's names and the schema read above.
generate() {
  "$tfplugindocs" generate \
    --provider-dir "$1" \
    --provider-name gitlabk8s \
    --providers-schema "$work/schema.json" \
    --website-source-dir templates \
    --examples-dir examples \
    --rendered-website-dir docs >"$work/generate.log" 2>&1 || {
    cat "$work/generate.log" >&2
    exit 1
  }
}

if ! $check; then
  generate "$REPO_ROOT"
  log "docs/ generated"
  exit 0
fi

copy="$work/provider"
mkdir -p "$copy/docs"
cp -r templates examples "$copy/"
[ -d docs ] && cp -r docs/. "$copy/docs/"
generate "$copy"
# Compare both ways, so a page tfplugindocs no longer produces counts as stale too.
if ! diff -ru docs "$copy/docs" >"$work/docs.diff" 2>&1; then
  cat "$work/docs.diff" >&2
  echo "docs/ is stale: run 'make generate' and commit the result" >&2
  exit 1
fi

"$tfplugindocs" validate --provider-dir "$REPO_ROOT" --provider-name gitlabk8s \
  --providers-schema "$work/schema.json" >"$work/validate.log" 2>&1 || {
  cat "$work/validate.log" >&2
  exit 1
}

# The provider page lists the GitLab CI/CD variables by hand, with what each one feeds; the list
# the provider reads lives in internal/gitlab. Every one of them must be documented.
missing=()
while read -r variable; do
  grep -q "\`$variable\`" docs/index.md || missing+=("$variable")
done < <(sed -n 's/^[[:space:]]*Env[A-Za-z]*[[:space:]]*=[[:space:]]*"\(CI_[A-Z_]*\)"$/\1/p' internal/gitlab/ci.go)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "docs/index.md does not document the CI/CD variables ${missing[*]}: add them to templates/index.md.tmpl" >&2
  exit 1
fi
log "docs/ is current"
