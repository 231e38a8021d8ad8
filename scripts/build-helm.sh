#!/usr/bin/env bash
# Builds the helm CLI at HELM_VERSION (lib.sh) from the Go module proxy, for the side-by-side
# benchmarks (scripts/bench.sh) and the tests that run helm on a release (scripts/test.sh exports
# it as GITLABK8S_HELM). helm's module has no replace directives, so a plain
# `go install` works; GOBIN pins where it lands. Prints the path of the binary.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

out="$BIN_DIR/helm-$HELM_VERSION"
[ -x "$out/helm" ] && { echo "$out/helm"; exit 0; }

mkdir -p "$out"
exec 9>"$out/.lock"
flock 9
[ -x "$out/helm" ] && { echo "$out/helm"; exit 0; }

# Stamp what helm's own Makefile stamps: its version (unstamped it reports only "v3.22"), and the
# Kubernetes version its client libraries were built for, which `helm template` reports to charts
# as .Capabilities.KubeVersion.
GOFLAGS='' go mod download "helm.sh/helm/v3@$HELM_VERSION"
hmod="$(GOFLAGS='' go env GOMODCACHE)/cache/download/helm.sh/helm/v3/@v/$HELM_VERSION.mod"
client_go="$(awk '$1 == "k8s.io/client-go" {print $2; exit}' "$hmod")"
k8s_minor="$(echo "$client_go" | cut -d. -f2)"
ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
for pkg in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
  ldflags+=" -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$k8s_minor"
done

log "building helm $HELM_VERSION (cold: about 3 minutes)"
GOBIN="$out" GOFLAGS='' CGO_ENABLED=0 go install -trimpath -ldflags "$ldflags" "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
echo "$out/helm"
