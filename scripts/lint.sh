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
# Two cores are shared with everything else: say so, rather than let it take them all. A second
# lint on the machine waits for the first instead of failing.
exec "$golangci_lint" run --allow-serial-runners --concurrency "${LINT_CONCURRENCY:-2}" "$@"
