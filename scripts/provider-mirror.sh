#!/usr/bin/env bash
# Builds the provider from this checkout into a filesystem mirror laid out the way `terraform init`
# and `tofu init` find a published provider, and writes a CLI configuration that installs
# gitlabk8s/gitlabk8s from it and nothing from the network. Prints the path of that configuration;
# use it as TF_CLI_CONFIG_FILE.
#
#   scripts/provider-mirror.sh DIR
#
# The provider gets the version of the newest CHANGELOG.md heading (PROVIDER_VERSION overrides it),
# so an example's version constraint is checked against the version about to be released.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

[ "$#" -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
mkdir -p "$1"
dir="$(cd "$1" && pwd)"

version="${PROVIDER_VERSION:-$(sed -n 's/^## \([0-9][0-9.]*[0-9A-Za-z.-]*\).*/\1/p' "$REPO_ROOT/CHANGELOG.md" | head -n 1)}"
[ -n "$version" ] || { echo "no version: CHANGELOG.md has no '## X.Y.Z' heading and PROVIDER_VERSION is unset" >&2; exit 1; }
platform="$(go env GOOS)_$(go env GOARCH)"

# OpenTofu and Terraform default to different registry hosts; the same binary serves both.
first=""
for host in registry.terraform.io registry.opentofu.org; do
  target="$dir/$host/gitlabk8s/gitlabk8s/$version/$platform"
  mkdir -p "$target"
  binary="$target/terraform-provider-gitlabk8s_v$version"
  engine="$target/gitlabk8s-engine_v$version"
  if [ -z "$first" ]; then
    log "building the provider $version into $dir"
    # Built as .goreleaser.yml builds what ships: static, -trimpath -s -w; on Linux the front
    # (cmd/front) under the provider's name and the engine it shares beside it, elsewhere the full
    # provider alone.
    ldflags="-s -w -X main.version=$version"
    if [ "$(go env GOOS)" = linux ]; then
      (cd "$REPO_ROOT" && CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$binary" ./cmd/front)
      (cd "$REPO_ROOT" && CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$engine" .)
    else
      (cd "$REPO_ROOT" && CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$binary" .)
    fi
    first="$target"
  else
    cp -f "$first"/* "$target/"
  fi
done

# No `direct` block: any other provider an example needs would come from the network, which a check
# must not rely on, so such an example fails at init, naming that provider.
cat > "$dir/cli.tfrc" <<EOF
provider_installation {
  filesystem_mirror {
    path    = "$dir"
    include = ["registry.terraform.io/gitlabk8s/gitlabk8s", "registry.opentofu.org/gitlabk8s/gitlabk8s"]
  }
}
EOF
echo "$dir/cli.tfrc"
