#!/usr/bin/env bash
# Builds the release and documentation tools at the versions pinned in lib.sh and prints the path
# of each binary, one a line, in the order asked:
#
#   scripts/build-tools.sh tfplugindocs golangci-lint goreleaser
#
# Each lands in $BIN_DIR/<tool>-<version>/, so a second run builds nothing and a version bump
# never reuses a stale binary. They are built from source with this machine's Go, which is also
# what keeps golangci-lint able to read code written for this Go version.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

usage() {
  echo "usage: $0 tfplugindocs|golangci-lint|goreleaser ..." >&2
  exit 2
}

# build <tool> <version> <package> <cold build note>
build() {
  local tool="$1" version="$2" pkg="$3" note="$4"
  local out="$BIN_DIR/$tool-$version"
  if [ ! -x "$out/$tool" ]; then
    log "building $tool $version ($note)"
    mkdir -p "$out"
    # A plain `go install pkg@version` builds the tool with its own go.mod, untouched by ours;
    # GOBIN pins where it lands and GOFLAGS='' drops settings meant for this module.
    GOBIN="$out" GOFLAGS='' go install -trimpath -ldflags "-s -w" "$pkg@$version"
  fi
  echo "$out/$tool"
}

[ "$#" -gt 0 ] || usage
for tool in "$@"; do
  case "$tool" in
  tfplugindocs)
    build tfplugindocs "$TFPLUGINDOCS_VERSION" \
      github.com/hashicorp/terraform-plugin-docs/cmd/tfplugindocs "cold: about 1 minute"
    ;;
  golangci-lint)
    build golangci-lint "$GOLANGCI_LINT_VERSION" \
      github.com/golangci/golangci-lint/v2/cmd/golangci-lint "cold: about 3 minutes"
    ;;
  goreleaser)
    build goreleaser "$GORELEASER_VERSION" \
      github.com/goreleaser/goreleaser/v2 "cold: about 5 minutes"
    ;;
  *) usage ;;
  esac
done
