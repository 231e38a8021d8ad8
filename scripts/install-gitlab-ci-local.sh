#!/usr/bin/env bash
# Installs gitlab-ci-local (npm), the local runner of GitLab pipelines the end-to-end tests run the
# example pipelines with (internal/e2e), at GITLAB_CI_LOCAL_VERSION (lib.sh), into
# $GITLABK8S_BIN_DIR. Version 4.65 is the last that runs on Node 20 (later ones call
# Set.prototype.union, Node 22's). Needs node and npm; its --shell-isolation needs rsync.
# Prints the path of the command.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

version="$GITLAB_CI_LOCAL_VERSION"
out="$BIN_DIR/gitlab-ci-local-v$version"
bin="$out/node_modules/.bin/gitlab-ci-local"
[ -x "$bin" ] && { echo "$bin"; exit 0; }

for tool in node npm rsync; do
  command -v "$tool" >/dev/null || { log "gitlab-ci-local needs $tool (Debian packages nodejs, npm, rsync)"; exit 1; }
done
mkdir -p "$out"
exec 9>"$out/.lock"
flock 9
[ -x "$bin" ] && { echo "$bin"; exit 0; }

log "installing gitlab-ci-local $version"
npm install --prefix "$out" --no-audit --no-fund --loglevel=error "gitlab-ci-local@$version" >&2
"$bin" --version >/dev/null
echo "$bin"
