#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager, kube-scheduler and kubectl from the Go module
# proxy. k8s.io/kubernetes replaces its staging modules with local paths, so `go install` cannot
# build it directly; a throwaway builder module replaces each staging module with its published
# v0.<minor>.<patch> release instead. Prints the output folder.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

out="$BIN_DIR/kubernetes-$KUBERNETES_VERSION"
bins=(kube-apiserver kube-controller-manager kube-scheduler kubectl)
missing=()
for b in "${bins[@]}"; do [ -x "$out/$b" ] || missing+=("$b"); done
[ ${#missing[@]} -eq 0 ] && { echo "$out"; exit 0; }

minor_patch="${KUBERNETES_VERSION#v1.}"
major=1
minor="${minor_patch%%.*}"
staging_version="v0.${minor_patch}"

work="$BIN_DIR/.build/kubernetes-$KUBERNETES_VERSION"
mkdir -p "$work" "$out"
cd "$work"

# Two callers (say, parallel test packages each running cluster-up) must not build the same
# binaries at once: the second waits here, then finds them present and builds nothing.
exec 9>"$work/.lock"
flock 9
missing=()
for b in "${bins[@]}"; do [ -x "$out/$b" ] || missing+=("$b"); done
[ ${#missing[@]} -eq 0 ] && { echo "$out"; exit 0; }

if [ ! -f go.mod ]; then
  cat > go.mod <<MOD
module gitlabk8s.local/kubebuilder

go 1.26
MOD
  go mod edit -require="k8s.io/kubernetes@$KUBERNETES_VERSION"
  go mod download "k8s.io/kubernetes@$KUBERNETES_VERSION"
  kmod="$(go env GOMODCACHE)/k8s.io/kubernetes@$KUBERNETES_VERSION/go.mod"
  # Read the staging list from kubernetes' own go.mod rather than typing it.
  awk '/=> \.\/staging/ {print $1}' "$kmod" | while read -r m; do
    go mod edit -replace="$m=$m@$staging_version"
  done
  # Kubernetes pins some non-staging modules with replace directives too; keep them.
  awk '/^replace \(/{f=1;next} f&&/^\)/{f=0} f && $0 !~ /staging/ && NF>=4 {print $1"="$3"@"$4}' "$kmod" | while read -r r; do
    go mod edit -replace="$r"
  done
fi
# Regenerated on every build so a binary added to `bins` is also listed here; `go mod tidy`
# then resolves whatever new packages it pulls in.
{
  printf '//go:build tools\n\npackage tools\n\nimport (\n'
  for b in "${bins[@]}"; do printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "$b"; done
  printf ')\n'
} > tools.go
GOFLAGS=-mod=mod go mod tidy -e >/dev/null 2>&1 || true

# Stamp the version: unstamped servers report v0.0.0-master+$Format:%H$, which clients cannot parse.
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$KUBERNETES_VERSION -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
done
for b in "${missing[@]}"; do
  log "building $b $KUBERNETES_VERSION (cold: several minutes)"
  GOFLAGS=-mod=mod go build -trimpath -ldflags "$ldflags" -o "$out/$b.tmp" "k8s.io/kubernetes/cmd/$b"
  mv "$out/$b.tmp" "$out/$b"
done
echo "$out"
