#!/usr/bin/env bash
# Builds the OpenTofu CLI from the Go module proxy, for machines without a terraform binary.
# OpenTofu's go.mod replaces github.com/hashicorp/hcl/v2 with its own fork, and `go install
# pkg@version` refuses modules with replace directives, so a throwaway builder module requires
# OpenTofu and repeats that replace. Prints the path of the binary.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

out="$BIN_DIR/opentofu-$OPENTOFU_VERSION"
[ -x "$out/tofu" ] && { echo "$out/tofu"; exit 0; }

work="$BIN_DIR/.build/opentofu-$OPENTOFU_VERSION"
mkdir -p "$work" "$out"
cd "$work"
exec 9>"$work/.lock"
flock 9
[ -x "$out/tofu" ] && { echo "$out/tofu"; exit 0; }

if [ ! -f go.mod ]; then
  go mod download "github.com/opentofu/opentofu@$OPENTOFU_VERSION"
  tmod="$(go env GOMODCACHE)/cache/download/github.com/opentofu/opentofu/@v/$OPENTOFU_VERSION.mod"
  # The main module's go and godebug lines decide the runtime's GODEBUG defaults; copy OpenTofu's
  # so the binary behaves like an upstream release.
  go_line="$(awk '$1 == "go" {print $2; exit}' "$tmod")"
  cat > go.mod <<MOD
module gitlabk8s.local/tofubuilder

go $go_line
MOD
  awk '$1 == "godebug" && NF == 2 {print}' "$tmod" >> go.mod
  go mod edit -require="github.com/opentofu/opentofu@$OPENTOFU_VERSION"
  # Copy the replace directives from OpenTofu's own go.mod rather than typing them.
  # Both forms are handled: `replace a v => b v` lines and the lines of a `replace ( ... )` block.
  awk '/^replace \(/ {block=1; next}
       block && /^\)/ {block=0; next}
       { if (block) $0 = "replace " $0 }
       $1 == "replace" && $4 == "=>" && NF == 6 {print $2"@"$3"="$5"@"$6}
       $1 == "replace" && $3 == "=>" && NF == 5 {print $2"="$4"@"$5}' "$tmod" | while read -r r; do
    go mod edit -replace="$r"
  done
  printf '//go:build tools\n\npackage tools\n\nimport _ "github.com/opentofu/opentofu/cmd/tofu"\n' > tools.go
  GOFLAGS=-mod=mod go mod tidy -e >/dev/null 2>&1 || true
fi

log "building tofu $OPENTOFU_VERSION (cold: about 4 minutes)"
# dev=no drops the "-dev" suffix a source build otherwise reports.
GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w -X github.com/opentofu/opentofu/version.dev=no" \
  -o "$out/tofu.tmp" github.com/opentofu/opentofu/cmd/tofu
mv "$out/tofu.tmp" "$out/tofu"
echo "$out/tofu"
