# shellcheck shell=bash disable=SC2034 # the variables are used by the scripts sourcing this file
# Settings and helpers shared by cluster-up.sh, cluster-down.sh, kubectl.sh and test.sh.
# Source it after lib.sh; it defines no side effects beyond variables.

# The state folder holds everything a cluster owns: certificates, tokens, etcd data, logs, pids.
# Every process we start names a path inside it on its command line, which is how cluster-down
# finds stragglers whose pid file was lost.
CLUSTER_DIR="${GITLABK8S_CLUSTER_DIR:-$REPO_ROOT/.cluster}"
# A relative path is taken from the repository root, wherever the caller runs (make, a script, a
# Go test in its package folder), so every caller means the same folder.
case "$CLUSTER_DIR" in /*) ;; *) CLUSTER_DIR="$REPO_ROOT/$CLUSTER_DIR" ;; esac
CLUSTER_DIR="${CLUSTER_DIR%/}"
APISERVER_PORT="${GITLABK8S_APISERVER_PORT:-16443}"
ETCD_PORT="${GITLABK8S_ETCD_PORT:-12379}"
ETCD_PEER_PORT="$((ETCD_PORT + 1))"
APISERVER_URL="https://127.0.0.1:$APISERVER_PORT"
# Bound on each readiness wait, not on builds (a cold build takes minutes).
CLUSTER_TIMEOUT="${GITLABK8S_CLUSTER_TIMEOUT:-120}"

# Start order; cluster-down walks it backwards. The API server must outlive the clients that
# talk to it, and etcd must outlive the API server, which otherwise hangs on SIGTERM.
COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok local-cloud faultproxy)

# GITLABK8S_FAULT_PROXY_PORT puts the fault proxy (scripts/cluster/faultproxy) in front of the API
# server on that port, and the kubeconfig and env file clients read name it instead.
FAULT_PROXY_PORT="${GITLABK8S_FAULT_PROXY_PORT:-}"
CLIENT_URL="$APISERVER_URL"
[ -z "$FAULT_PROXY_PORT" ] || CLIENT_URL="https://127.0.0.1:$FAULT_PROXY_PORT"

# component_wanted NAME succeeds when this cluster runs NAME: all of them, but the fault proxy
# only when asked for. cluster-down stops every component, wanted or not.
component_wanted() {
  [ "$1" != faultproxy ] || [ -n "$FAULT_PROXY_PORT" ]
}

PKI_DIR="$CLUSTER_DIR/pki"
LOG_DIR="$CLUSTER_DIR/logs"
PID_DIR="$CLUSTER_DIR/pids"
KUBECONFIG_FILE="$CLUSTER_DIR/kubeconfig"
ENV_FILE="$CLUSTER_DIR/env"
# Written by cluster-up; cluster-down wipes only a folder carrying it, so a mistyped
# GITLABK8S_CLUSTER_DIR can never make it delete someone's files.
MARKER_FILE="$CLUSTER_DIR/.gitlabk8s-cluster"

# lock_cluster serialises cluster-up and cluster-down on $CLUSTER_DIR/.lock, the same lock
# internal/testcluster takes. That Go code holds the lock itself while it runs cluster-up and says
# so with GITLABK8S_CLUSTER_LOCKED=1; taking it again here would deadlock.
lock_cluster() {
  mkdir -p "$CLUSTER_DIR"
  [ "${GITLABK8S_CLUSTER_LOCKED:-}" = 1 ] && return 0
  exec 9>"$CLUSTER_DIR/.lock"
  if ! flock -n 9; then
    log "waiting for another cluster-up/cluster-down on $CLUSTER_DIR"
    flock 9
  fi
}

# component_pid prints the pid of a running component and succeeds, or fails when it is not
# running. The command-line check guards against a recycled pid from an old pid file.
component_pid() {
  local name="$1" pid
  [ -f "$PID_DIR/$name.pid" ] || return 1
  pid="$(cat "$PID_DIR/$name.pid")"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -qF -- "$CLUSTER_DIR/" || return 1
  echo "$pid"
}

# stray_pids [NAME] prints the pids of our components (or of component NAME) still running with
# the state folder on their command line, whatever the pid files say.
stray_pids() {
  local only="${1:-}" proc pid cmd exe name
  for proc in /proc/[0-9]*; do
    pid="${proc#/proc/}"
    [ "$pid" = "$$" ] && continue
    cmd="$(tr '\0' ' ' 2>/dev/null <"$proc/cmdline")" || continue
    case "$cmd" in *"$CLUSTER_DIR/"*) ;; *) continue ;; esac
    exe="${cmd%% *}"
    name="${exe##*/}"
    [ -z "$only" ] || [ "$name" = "$only" ] || continue
    case " ${COMPONENTS[*]} " in *" $name "*) echo "$pid" ;; esac
  done
}

# component_config NAME prints a digest of the files NAME was started from, for the components
# that read files only when they start: kwok its stages, local-cloud its source. cluster-up
# records it beside the pid and restarts a component whose files changed since.
component_config() {
  case "$1" in
  kwok) cat "$REPO_ROOT"/scripts/cluster/kwok/*.yaml ;;
  local-cloud) cat "$REPO_ROOT"/scripts/cluster/local-cloud/*.go "$REPO_ROOT/go.mod" "$REPO_ROOT/go.sum" ;;
  faultproxy) cat "$REPO_ROOT"/scripts/cluster/faultproxy/*.go "$REPO_ROOT"/internal/testing/faultproxy/*.go "$REPO_ROOT/go.sum" ;;
  *) return 0 ;;
  esac | sha256sum | cut -d' ' -f1
}

# component_stale NAME succeeds when NAME runs from files that changed since it started (or
# from before cluster-up recorded them).
component_stale() {
  case "$1" in kwok | local-cloud | faultproxy) ;; *) return 1 ;; esac
  component_pid "$1" >/dev/null || return 1
  [ "$(cat "$PID_DIR/$1.config" 2>/dev/null)" != "$(component_config "$1")" ]
}

# Seconds between SIGTERM and SIGKILL. The API server and etcd flush state on SIGTERM, so they
# get the time they usually need; nothing here holds data worth waiting longer for.
STOP_TIMEOUT="${GITLABK8S_STOP_TIMEOUT:-20}"

# stop_pid NAME PID: SIGTERM, then SIGKILL once STOP_TIMEOUT has passed.
stop_pid() {
  local name="$1" pid="$2" deadline=$((SECONDS + STOP_TIMEOUT))
  log "stopping $name (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || return 0
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      log "$name did not exit within ${STOP_TIMEOUT}s of SIGTERM: sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      sleep 0.2
      break
    fi
    sleep 0.2
  done
}

# apiserver_ready succeeds when the API server answers /readyz with the cluster's CA.
apiserver_ready() {
  [ -f "$PKI_DIR/ca.crt" ] || return 1
  curl -fsS --max-time 3 --cacert "$PKI_DIR/ca.crt" "$APISERVER_URL/readyz" >/dev/null 2>&1
}

# cluster_running succeeds when every component runs, the API server is ready and the files
# clients need exist: the state in which cluster-up has nothing to do.
cluster_running() {
  local name
  for name in "${COMPONENTS[@]}"; do
    component_wanted "$name" || continue
    component_pid "$name" >/dev/null && ! component_stale "$name" || return 1
  done
  [ -f "$KUBECONFIG_FILE" ] && [ -f "$ENV_FILE" ] && grep -qF "server: $CLIENT_URL" "$KUBECONFIG_FILE" && apiserver_ready
}
