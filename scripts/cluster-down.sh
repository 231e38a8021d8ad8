#!/usr/bin/env bash
# Stops the local cluster started by cluster-up.sh and, unless KEEP_STATE=1, wipes its state
# folder. Idempotent: stopping a stopped cluster succeeds. Reads the same settings as
# cluster-up.sh (GITLABK8S_CLUSTER_DIR, ...).
set -euo pipefail
scripts="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=lib.sh
source "$scripts/lib.sh"
# shellcheck source=cluster/common.sh
source "$scripts/cluster/common.sh"

# stop_strays stops components whose pid file was lost (a crashed cluster-up, a deleted state
# folder): they still name the state folder on their command line. Same order as below.
stop_strays() {
  local i pid
  for ((i = ${#COMPONENTS[@]} - 1; i >= 0; i--)); do
    for pid in $(stray_pids "${COMPONENTS[i]}"); do stop_pid "${COMPONENTS[i]}" "$pid"; done
  done
}

# cluster-up marks its folder before starting anything, so without the marker there is no state
# to stop or wipe (and a mistyped GITLABK8S_CLUSTER_DIR is left untouched).
if [ ! -f "$MARKER_FILE" ]; then
  stop_strays
  log "no cluster state at $CLUSTER_DIR: nothing to stop"
  exit 0
fi
lock_cluster

# Reverse start order: clients of the API server first, etcd last.
for ((i = ${#COMPONENTS[@]} - 1; i >= 0; i--)); do
  name="${COMPONENTS[i]}"
  if pid="$(component_pid "$name")"; then
    stop_pid "$name" "$pid"
  fi
  rm -f "$PID_DIR/$name.pid"
done
stop_strays

remaining="$(stray_pids)"
if [ -n "$remaining" ]; then
  echo "cluster-down: processes still running for $CLUSTER_DIR:" >&2
  for pid in $remaining; do ps -o pid=,args= -p "$pid" >&2 || true; done
  exit 1
fi

if [ "${KEEP_STATE:-0}" = 1 ]; then
  log "cluster stopped; state kept in $CLUSTER_DIR (cluster-up restarts it)"
else
  # The lock file stays: another cluster-up may be waiting on it right now.
  find "$CLUSTER_DIR" -mindepth 1 -maxdepth 1 ! -name .lock -exec rm -rf {} +
  log "cluster stopped; state wiped from $CLUSTER_DIR"
fi
