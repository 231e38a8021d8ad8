# shellcheck shell=bash
# Shared settings for the project's scripts. Source it; it defines no side effects.
# Every version pinned here is the single place to change it.
KUBERNETES_VERSION="${KUBERNETES_VERSION:-v1.37.2}"
KWOK_VERSION="${KWOK_VERSION:-v0.7.0}"
OPENTOFU_VERSION="${OPENTOFU_VERSION:-v1.10.10}"
HELM_VERSION="${HELM_VERSION:-v3.22.0}"
HELM4_VERSION="${HELM4_VERSION:-v4.3.2}"
GORELEASER_VERSION="${GORELEASER_VERSION:-v2.15.1}"
GOLANGCI_LINT_VERSION="${GOLANGCI_LINT_VERSION:-v2.15.0}"
TFPLUGINDOCS_VERSION="${TFPLUGINDOCS_VERSION:-v0.24.0}"
GITLAB_CI_LOCAL_VERSION="${GITLAB_CI_LOCAL_VERSION:-4.65.1}"

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# Built tools live in BIN_DIR, one folder per tool and version, so a version bump never reuses a stale binary.
BIN_DIR="${GITLABK8S_BIN_DIR:-$REPO_ROOT/bin}"
mkdir -p "$BIN_DIR"
BIN_DIR="$(cd "$BIN_DIR" && pwd)"

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
