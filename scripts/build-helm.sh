#!/usr/bin/env bash
# Builds the helm CLI at the version given as the first argument (default HELM_VERSION, lib.sh;
# HELM4_VERSION for helm 4) from the Go module proxy, for the side-by-side benchmarks
# (scripts/bench.sh) and the tests that run helm on a release (scripts/test.sh exports them as
# GITLABK8S_HELM and GITLABK8S_HELM4). helm's module has no replace directives, so a plain
# `go install` works; GOBIN pins where it lands. Prints the path of the binary.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

version="${1:-$HELM_VERSION}"
module="helm.sh/helm/${version%%.*}"
out="$BIN_DIR/helm-$version"
[ -x "$out/helm" ] && { echo "$out/helm"; exit 0; }

mkdir -p "$out"
exec 9>"$out/.lock"
flock 9
[ -x "$out/helm" ] && { echo "$out/helm"; exit 0; }

# Stamp what helm's own Makefile stamps: its version (unstamped it reports only "v3.22"). Helm 3
# also takes the Kubernetes version its client libraries were built for, which `helm template`
# reports to charts as .Capabilities.KubeVersion; Helm 4 reads it from its build information.
GOFLAGS='' go mod download "$module@$version"
ldflags="-s -w -X $module/internal/version.version=$version -X $module/internal/version.gitTreeState=clean"
if [ "$module" = helm.sh/helm/v3 ]; then
  hmod="$(GOFLAGS='' go env GOMODCACHE)/cache/download/$module/@v/$version.mod"
  client_go="$(awk '$1 == "k8s.io/client-go" {print $2; exit}' "$hmod")"
  k8s_minor="$(echo "$client_go" | cut -d. -f2)"
  for pkg in $module/pkg/lint/rules $module/pkg/chartutil; do
    ldflags+=" -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$k8s_minor"
  done
fi

log "building helm $version (cold: about 3 minutes)"
GOBIN="$out" GOFLAGS='' CGO_ENABLED=0 go install -trimpath -ldflags "$ldflags" "$module/cmd/helm@$version"
echo "$out/helm"
