#!/usr/bin/env bash
# Builds kwok, which plays the kubelet for a fake node: it moves pods through their lifecycle
# (and through the failure states our stages describe) without running any container.
# Prints the path of the binary.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

out="$BIN_DIR/kwok-$KWOK_VERSION"
if [ ! -x "$out/kwok" ]; then
  log "building kwok $KWOK_VERSION (cold: about 2 minutes)"
  mkdir -p "$out"
  # kwok's module has no local replaces, so a plain `go install` works; GOBIN pins where it lands.
  GOBIN="$out" GOFLAGS='' go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
fi
echo "$out/kwok"
