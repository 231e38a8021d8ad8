#!/usr/bin/env bash
# Lints the module with the pinned golangci-lint and .golangci.yml: errcheck, staticcheck, govet,
# forcetypeassert, and the depguard rules that keep SDKv2 out, the framework in internal/provider
# and cluster clients out of the pure packages. Arguments replace the default `./...`.
set -euo pipefail
scripts="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=lib.sh
source "$scripts/lib.sh"
cd "$REPO_ROOT"

golangci_lint="$("$scripts/build-tools.sh" golangci-lint)"
"$golangci_lint" config verify
[ "$#" -gt 0 ] || set -- ./...
# Two cores are shared with everything else: say so, rather than let it take them all.
exec "$golangci_lint" run --concurrency "${LINT_CONCURRENCY:-2}" "$@"
