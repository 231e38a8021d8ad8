#!/usr/bin/env bash
# Starts a local Kubernetes control plane for tests and demos: etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, and kwok playing the kubelets of three fake nodes.
# Everything listens on loopback only and lives in one state folder. Idempotent: on a running
# cluster it only applies the RBAC manifests again and rewrites the kubeconfig and env file, a
# stopped one (KEEP_STATE=1 cluster-down) restarts with its data.
#
# Settings (environment):
#   GITLABK8S_CLUSTER_DIR     state folder (default: <repo>/.cluster)
#   GITLABK8S_APISERVER_PORT  API server port (default: 16443)
#   GITLABK8S_ETCD_PORT       etcd client port (default: 12379); the peer port is the next one
#   GITLABK8S_CLUSTER_TIMEOUT seconds allowed for each readiness wait (default: 120)
#   GITLABK8S_BIN_DIR         where built binaries live (default: <repo>/bin)
#   GITLABK8S_FAULT_PROXY_PORT when set, the fault proxy (scripts/cluster/faultproxy) listens on
#                             this port in front of the API server and the kubeconfig and env
#                             file name it: `kill -USR1` its pid (pids/faultproxy.pid) resets
#                             every connection, `kill -USR2` stalls them for 10 s;
#                             GITLABK8S_FAULT_PROXY_ARGS adds flags (-delay 20ms -reset-every 5s)
#
# It writes $GITLABK8S_CLUSTER_DIR/kubeconfig (contexts admin, current, and ci-job) and
# $GITLABK8S_CLUSTER_DIR/env (shell-sourceable: KUBECONFIG, host, tokens, CA path, kubectl).
# The ci-job context is a CI job as the GitLab agent impersonates it (see "CI job identity").
set -euo pipefail
scripts="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=lib.sh
source "$scripts/lib.sh"
# shellcheck source=cluster/common.sh
source "$scripts/cluster/common.sh"

case "$CLUSTER_DIR" in *"'"* | *" "*)
  echo "GITLABK8S_CLUSTER_DIR must not contain quotes or spaces: $CLUSTER_DIR" >&2
  exit 1 ;;
esac

# Refuse to adopt a folder that holds something other than a cluster of ours: cluster-down wipes
# what carries our marker, and a mistyped GITLABK8S_CLUSTER_DIR must never make that $HOME.
if [ -d "$CLUSTER_DIR" ] && [ ! -f "$MARKER_FILE" ] &&
  [ -n "$(find "$CLUSTER_DIR" -mindepth 1 -maxdepth 1 ! -name .lock -print -quit)" ]; then
  echo "cluster-up: $CLUSTER_DIR is not empty and holds no cluster state; choose another GITLABK8S_CLUSTER_DIR" >&2
  exit 1
fi

lock_cluster

if cluster_running; then
  log "cluster already running: $APISERVER_URL (state in $CLUSTER_DIR); refreshing its RBAC and kubeconfig"
fi

# --- binaries -----------------------------------------------------------------------------------

if ! command -v etcd >/dev/null 2>&1; then
  log "installing etcd (Debian package etcd-server)"
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get install -y --no-install-recommends etcd-server ||
    { "${sudo[@]}" apt-get update && "${sudo[@]}" apt-get install -y --no-install-recommends etcd-server; }
fi
ETCD="$(command -v etcd)"
kube_bin="$("$scripts/build-kubernetes.sh")"
KWOK="$("$scripts/build-kwok.sh")"
KUBECTL="$kube_bin/kubectl"

# --- credentials --------------------------------------------------------------------------------

mkdir -p "$PKI_DIR" "$LOG_DIR" "$PID_DIR" "$CLUSTER_DIR/kubeconfigs"
touch "$MARKER_FILE"
# Keys and tokens are secrets even on a test machine: keep them private to the user.
chmod 700 "$PKI_DIR" "$CLUSTER_DIR/kubeconfigs"

# Our own openssl config, so the result does not depend on the distribution's openssl.cnf.
write_openssl_config() {
  cat >"$PKI_DIR/openssl.cnf" <<'CNF'
[req]
distinguished_name = dn
prompt = no
[dn]
CN = placeholder
[v3_ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign, digitalSignature
subjectKeyIdentifier = hash
[v3_server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1, DNS:localhost, IP:10.96.0.1, DNS:kubernetes, DNS:kubernetes.default, DNS:kubernetes.default.svc, DNS:kubernetes.default.svc.cluster.local
CNF
}

if [ ! -s "$PKI_DIR/ca.crt" ] || [ ! -s "$PKI_DIR/apiserver.crt" ] || [ ! -s "$PKI_DIR/sa.pub" ]; then
  log "generating certificates and keys in $PKI_DIR"
  (
    umask 077
    cd "$PKI_DIR"
    write_openssl_config
    openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 3650 -config openssl.cnf -extensions v3_ca \
      -subj "/CN=gitlabk8s-local-ca" -keyout ca.key -out ca.crt 2>/dev/null
    # The API server's serving certificate, signed by that CA, so clients verify TLS.
    openssl req -newkey rsa:2048 -nodes -sha256 -config openssl.cnf \
      -subj "/CN=kube-apiserver" -keyout apiserver.key -out apiserver.csr 2>/dev/null
    openssl x509 -req -sha256 -days 3650 -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
      -extfile openssl.cnf -extensions v3_server -out apiserver.crt 2>/dev/null
    rm -f apiserver.csr
    # Service-account tokens are signed with this key and checked with its public half.
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
  )
fi

# Static tokens: the simplest way to get an all-powerful identity and the components' own.
# Format: token,user,uid,"group,group".
if [ ! -s "$PKI_DIR/tokens.csv" ]; then
  (
    umask 077
    {
      echo "$(openssl rand -hex 24),admin,admin,\"system:masters\""
      echo "$(openssl rand -hex 24),system:kube-controller-manager,system:kube-controller-manager"
      echo "$(openssl rand -hex 24),system:kube-scheduler,system:kube-scheduler"
      # kwok writes node and pod status, leases and deletes pods: give it the run of the cluster.
      echo "$(openssl rand -hex 24),kwok,kwok,\"system:masters\""
    } >"$PKI_DIR/tokens.csv.tmp"
    mv "$PKI_DIR/tokens.csv.tmp" "$PKI_DIR/tokens.csv"
  )
fi
token_of() { awk -F, -v user="$1" '$2 == user {print $1}' "$PKI_DIR/tokens.csv"; }
ADMIN_TOKEN="$(token_of admin)"

# user_impersonation[USER] holds kubeconfig lines added to USER's entry (see "CI job identity").
declare -A user_impersonation=()

# write_kubeconfig FILE CURRENT-CONTEXT USER=TOKEN... writes a kubeconfig with one context per
# user. The CA is embedded, so the file works wherever it is copied, and TLS is always verified.
write_kubeconfig() {
  local file="$1" current="$2" server="${KUBECONFIG_SERVER:-$APISERVER_URL}" ca_data pair
  shift 2
  ca_data="$(base64 -w0 <"$PKI_DIR/ca.crt")"
  (
    umask 077
    {
      echo "apiVersion: v1"
      echo "kind: Config"
      echo "clusters:"
      echo "- name: gitlabk8s-local"
      echo "  cluster:"
      echo "    server: $server"
      echo "    certificate-authority-data: $ca_data"
      echo "contexts:"
      for pair in "$@"; do
        echo "- name: ${pair%%=*}"
        echo "  context:"
        echo "    cluster: gitlabk8s-local"
        echo "    user: ${pair%%=*}"
        echo "    namespace: default"
      done
      echo "current-context: $current"
      echo "users:"
      for pair in "$@"; do
        echo "- name: ${pair%%=*}"
        echo "  user:"
        echo "    token: ${pair#*=}"
        if [ -n "${user_impersonation[${pair%%=*}]:-}" ]; then echo "${user_impersonation[${pair%%=*}]}"; fi
      done
      echo "preferences: {}"
    } >"$file.tmp"
    mv "$file.tmp" "$file"
  )
}
# This script's own kubectl uses admin.yaml, so the kubeconfig clients read is written once, at
# the end, and a refresh never shows them one without the ci-job context.
for user in admin system:kube-controller-manager system:kube-scheduler kwok; do
  write_kubeconfig "$CLUSTER_DIR/kubeconfigs/${user#system:}.yaml" "${user#system:}" "${user#system:}=$(token_of "$user")"
done

# --- processes ----------------------------------------------------------------------------------

# fail_with_log NAME MESSAGE prints why the cluster did not come up and the end of NAME's log.
fail_with_log() {
  local name="$1"
  shift
  {
    echo
    echo "cluster-up: $*"
    echo "---- last lines of $LOG_DIR/$name.log ----"
    tail -n 40 "$LOG_DIR/$name.log" 2>/dev/null || echo "(no log)"
    echo "----"
  } >&2
  exit 1
}

# start NAME COMMAND... starts a component unless it already runs. setsid puts it in its own
# session, so neither Ctrl-C in the calling shell nor the end of the test process that ran us
# reaches it; all its file descriptors point at /dev/null or its log, so callers capturing our
# output do not wait on it (fd 9 is the lock, which it must not inherit).
declare -A STARTED_WITH=() RESTARTED=()
start() {
  local name="$1" pid
  shift
  if pid="$(component_pid "$name")"; then
    log "$name already running (pid $pid)"
    return 0
  fi
  log "starting $name (log: $LOG_DIR/$name.log)"
  printf '\n==== %s starting %s\n' "$(date -u +%FT%TZ)" "$name" >>"$LOG_DIR/$name.log"
  STARTED_WITH[$name]="$(printf '%q ' "$@")"
  setsid "$@" </dev/null >>"$LOG_DIR/$name.log" 2>&1 9>&- &
  echo "$!" >"$PID_DIR/$name.pid"
  component_config "$name" >"$PID_DIR/$name.config"
}

# restart_if_stale NAME stops NAME when the files it was started from changed, so that the
# start that follows runs it with the new ones (a running cluster picks up new kwok stages).
restart_if_stale() {
  local pid
  component_stale "$1" || return 0
  pid="$(component_pid "$1")"
  log "$1 runs from files that changed since it started: restarting it"
  stop_pid "$1" "$pid"
  rm -f "$PID_DIR/$1.pid"
}

# restart_once NAME WHEN returns when NAME runs. A component this run started that died (a
# signal from outside leaves an empty log) is started once more, saying so; a second death, or
# the death of one this run did not start, fails with its log.
restart_once() {
  local name="$1" when="$2"
  component_pid "$name" >/dev/null && return 0
  if [ -n "${STARTED_WITH[$name]:-}" ] && [ -z "${RESTARTED[$name]:-}" ]; then
    RESTARTED[$name]=1
    log "$name exited $when; starting it once more (its log: $LOG_DIR/$name.log)"
    eval "start $(printf '%q' "$name") ${STARTED_WITH[$name]}"
    return 0
  fi
  fail_with_log "$name" "$name exited $when"
}

# wait_until NAME WHAT COMMAND... retries COMMAND until it succeeds, failing early when NAME's
# process has died (see restart_once) and after CLUSTER_TIMEOUT seconds otherwise.
wait_until() {
  local name="$1" what="$2" deadline=$((SECONDS + CLUSTER_TIMEOUT))
  shift 2
  until "$@" >/dev/null 2>&1; do
    restart_once "$name" "while waiting for $what"
    [ "$SECONDS" -lt "$deadline" ] || fail_with_log "$name" "timed out after ${CLUSTER_TIMEOUT}s waiting for $what"
    sleep 0.5
  done
  log "$what"
}

kubectl() { "$KUBECTL" --kubeconfig "$CLUSTER_DIR/kubeconfigs/admin.yaml" --context admin "$@"; }

# wait_port_free NAME PORT VARIABLE waits until nothing listens on 127.0.0.1:PORT, unless our own
# NAME is running (then the port is its own). Another cluster on the same ports that is shutting
# down frees them within seconds; one that keeps running is named, with the setting to change.
wait_port_free() {
  local name="$1" port="$2" variable="$3" deadline=$((SECONDS + 30))
  component_pid "$name" >/dev/null && return 0
  while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "cluster-up: port $port, which $name needs, has been in use for 30 s by another process (another cluster?)." >&2
      echo "cluster-up: stop it (scripts/cluster-down.sh with its GITLABK8S_CLUSTER_DIR), or choose another port with $variable." >&2
      exit 1
    fi
    sleep 0.5
  done
}
wait_port_free etcd "$ETCD_PORT" GITLABK8S_ETCD_PORT
wait_port_free etcd "$ETCD_PEER_PORT" GITLABK8S_ETCD_PORT
wait_port_free kube-apiserver "$APISERVER_PORT" GITLABK8S_APISERVER_PORT

start etcd "$ETCD" \
  --name=gitlabk8s \
  --data-dir="$CLUSTER_DIR/etcd" \
  --listen-client-urls="http://127.0.0.1:$ETCD_PORT" \
  --advertise-client-urls="http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-advertise-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster="gitlabk8s=http://127.0.0.1:$ETCD_PEER_PORT" \
  --logger=zap
wait_until etcd "etcd healthy on 127.0.0.1:$ETCD_PORT" \
  curl -fsS --max-time 3 "http://127.0.0.1:$ETCD_PORT/health"

service_cidr=10.96.0.0/16
# GITLABK8S_AUDIT_LOG=1 has the API server log every request's metadata (who, which verb, which
# resource, the answer's code, the user agent) to $LOG_DIR/audit.log, one JSON line each, for
# counting the requests a command made (scripts/bench/sweep.sh). Off by default: it costs the API
# server time on every request.
audit_args=()
if [ "${GITLABK8S_AUDIT_LOG:-}" = 1 ]; then
  mkdir -p "$LOG_DIR"
  cat >"$CLUSTER_DIR/audit-policy.yaml" <<'EOF'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
EOF
  audit_args=(--audit-policy-file="$CLUSTER_DIR/audit-policy.yaml" --audit-log-path="$LOG_DIR/audit.log"
    --audit-log-format=json --audit-log-mode=batch)
fi
# --advertise-address and --endpoint-reconciler-type=none: the default would advertise the host's
# outward IP (nothing listens there) and Endpoints may not hold a loopback address anyway.
start kube-apiserver "$kube_bin/kube-apiserver" \
  --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
  --bind-address=127.0.0.1 \
  --secure-port="$APISERVER_PORT" \
  --advertise-address=127.0.0.1 \
  --endpoint-reconciler-type=none \
  --cert-dir="$PKI_DIR/apiserver-generated" \
  --tls-cert-file="$PKI_DIR/apiserver.crt" \
  --tls-private-key-file="$PKI_DIR/apiserver.key" \
  --client-ca-file="$PKI_DIR/ca.crt" \
  --token-auth-file="$PKI_DIR/tokens.csv" \
  --authorization-mode=Node,RBAC \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$PKI_DIR/sa.pub" \
  --service-account-signing-key-file="$PKI_DIR/sa.key" \
  --service-cluster-ip-range="$service_cidr" \
  --allow-privileged=true \
  --feature-gates=WatchList=false \
  --profiling=false \
  "${audit_args[@]}"
wait_until kube-apiserver "kube-apiserver ready at $APISERVER_URL" apiserver_ready

start kube-controller-manager "$kube_bin/kube-controller-manager" \
  --kubeconfig="$CLUSTER_DIR/kubeconfigs/kube-controller-manager.yaml" \
  --leader-elect=false \
  --secure-port=0 \
  --service-account-private-key-file="$PKI_DIR/sa.key" \
  --root-ca-file="$PKI_DIR/ca.crt" \
  --use-service-account-credentials=true \
  --cluster-signing-cert-file="$PKI_DIR/ca.crt" \
  --cluster-signing-key-file="$PKI_DIR/ca.key" \
  --service-cluster-ip-range="$service_cidr" \
  --profiling=false

start kube-scheduler "$kube_bin/kube-scheduler" \
  --kubeconfig="$CLUSTER_DIR/kubeconfigs/kube-scheduler.yaml" \
  --leader-elect=false \
  --secure-port=0 \
  --profiling=false

# The nodes, the GitLab agent's ServiceAccount and the ci-job RBAC; apply leaves them untouched
# when they already match. The nodes are those node.yaml lists: NODES takes their names from
# what apply made.
kubectl apply -f "$scripts/cluster/manifests/gitlab-agent.yaml" -f "$scripts/cluster/manifests/rbac-ci-job.yaml" >/dev/null
applied_nodes=$(kubectl apply -f "$scripts/cluster/manifests/node.yaml" -o name)
read -r -a NODES <<<"$(echo "$applied_nodes" | sed 's|^node/||' | tr '\n' ' ')"
if [ "${#NODES[@]}" -eq 0 ]; then
  echo "cluster-up: $scripts/cluster/manifests/node.yaml made no node" >&2
  exit 1
fi
# --- node capacity and storage class (local-cloud) ---------------------------------------------
# apply does not touch a Node's status, so each node gets the capacity of node-status.yaml through
# its status subresource, a node made by an earlier cluster-up too; kwok keeps whatever capacity
# the node has.
for node in "${NODES[@]}"; do
  kubectl patch node "$node" --subresource=status --type=merge \
    --patch-file="$scripts/cluster/manifests/node-status.yaml" >/dev/null
done
kubectl apply -f "$scripts/cluster/manifests/storageclass.yaml" >/dev/null

# kwok: --node-lease-duration-seconds makes it renew the node's Lease, a heartbeat frequent
# enough for the controller manager; without it the node flaps NotReady every minute. A Lease
# left by an earlier kwok would hold the new one off until it expires, so drop it first.
# Its stages are kwok's default fast ones plus our failure stages (scripts/cluster/kwok/); giving
# any stage replaces all of kwok's built-in ones. KWOK_WORKDIR keeps ~/.kwok out of the picture.
restart_if_stale kwok
if ! component_pid kwok >/dev/null; then
  kubectl -n kube-node-lease delete lease "${NODES[@]}" --ignore-not-found >/dev/null
fi
stage_flags=()
for f in "$scripts"/cluster/kwok/*.yaml; do stage_flags+=("--config=$f"); done
start kwok env KWOK_WORKDIR="$CLUSTER_DIR/kwok" "$KWOK" \
  --kubeconfig="$CLUSTER_DIR/kubeconfigs/kwok.yaml" \
  --manage-all-nodes=false \
  --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
  --node-lease-duration-seconds=40 \
  --cidr=10.244.0.1/16 \
  --node-ip=10.240.0.1 \
  "${stage_flags[@]}"

nodes_ready() {
  local node
  for node in "${NODES[@]}"; do
    [ "$(kubectl get node "$node" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')" = True ] || return 1
  done
}
wait_until kwok "nodes ${NODES[*]} Ready" nodes_ready

# --- local-cloud: volumes and load balancer addresses -----------------------------------------
# local-cloud (scripts/cluster/local-cloud) provisions the default StorageClass's volumes and
# gives LoadBalancer Services an address. It is built from this module into the state folder
# (built to a temporary name, then renamed: a running binary cannot be overwritten), and runs
# with kwok's identity, which plays the rest of the infrastructure.
restart_if_stale local-cloud
if ! component_pid local-cloud >/dev/null; then
  log "building local-cloud (go build ./scripts/cluster/local-cloud)"
  mkdir -p "$CLUSTER_DIR/bin"
  (cd "$REPO_ROOT" && GOFLAGS='' go build -trimpath -ldflags "-s -w" -o "$CLUSTER_DIR/bin/local-cloud.new" ./scripts/cluster/local-cloud)
  mv "$CLUSTER_DIR/bin/local-cloud.new" "$CLUSTER_DIR/bin/local-cloud"
fi
start local-cloud "$CLUSTER_DIR/bin/local-cloud" \
  --kubeconfig="$CLUSTER_DIR/kubeconfigs/kwok.yaml" \
  --root="$CLUSTER_DIR/volumes"
# The provisioner logs this line once it runs; only this start's part of the log counts.
local_cloud_running() {
  awk '/^==== .* starting local-cloud$/ { this = "" } { this = this $0 "\n" } END { printf "%s", this }' \
    "$LOG_DIR/local-cloud.log" | grep -q "Starting provisioner controller"
}
wait_until local-cloud "local-cloud provisioning volumes and load balancers" local_cloud_running

# --- fault proxy (GITLABK8S_FAULT_PROXY_PORT) --------------------------------------------------
# Built like local-cloud; a cluster started without it stops one left from an earlier start.
restart_if_stale faultproxy
if component_wanted faultproxy; then
  if ! component_pid faultproxy >/dev/null; then
    log "building faultproxy (go build ./scripts/cluster/faultproxy)"
    mkdir -p "$CLUSTER_DIR/bin"
    (cd "$REPO_ROOT" && GOFLAGS='' go build -trimpath -ldflags "-s -w" -o "$CLUSTER_DIR/bin/faultproxy.new" ./scripts/cluster/faultproxy)
    mv "$CLUSTER_DIR/bin/faultproxy.new" "$CLUSTER_DIR/bin/faultproxy"
  fi
  wait_port_free faultproxy "$FAULT_PROXY_PORT" GITLABK8S_FAULT_PROXY_PORT
  # shellcheck disable=SC2086 # the extra flags are words
  start faultproxy "$CLUSTER_DIR/bin/faultproxy" -listen "127.0.0.1:$FAULT_PROXY_PORT" \
    -upstream "127.0.0.1:$APISERVER_PORT" ${GITLABK8S_FAULT_PROXY_ARGS:-}
  wait_until faultproxy "faultproxy in front of the API server at $CLIENT_URL" \
    curl -fsS --max-time 3 --cacert "$PKI_DIR/ca.crt" "$CLIENT_URL/readyz"
elif pid="$(component_pid faultproxy)"; then
  stop_pid faultproxy "$pid"
  rm -f "$PID_DIR/faultproxy.pid"
fi

# Pods cannot be created in a namespace before its default ServiceAccount exists.
wait_until kube-controller-manager "ServiceAccount default/default exists" \
  kubectl -n default get serviceaccount default

# A component that died after it was ready (kwok's node stays Ready until its lease runs out)
# would fail the tests much later, far from the cause.
# A second look a moment later catches a component started once more that died again.
for pass in 1 2; do
  sleep 1
  for name in "${COMPONENTS[@]}"; do
    component_wanted "$name" && restart_once "$name" "after it was ready (check $pass)"
  done
done

# --- CI job identity ----------------------------------------------------------------------------
# The ci-job context is what the GitLab agent does for a CI job with ci_access and
# access_as: {ci_job: {}}: the agent's ServiceAccount (gitlab-agent/gitlab-agent, which may only
# impersonate) impersonates user gitlab:ci_job:<job id> with the groups below, so RBAC decides on
# the job's identity for real. The job is job 1 of project 1 (in group 1), environment "ci" of
# tier development; rbac-ci-job.yaml grants project 1's jobs their rights.
AGENT_TOKEN="$(kubectl -n gitlab-agent create token gitlab-agent --duration=8760h)"
user_impersonation[ci-job]="$(cat <<'YAML'
    as: gitlab:ci_job:1
    as-groups:
    - gitlab:ci_job
    - gitlab:group:1
    - gitlab:group_env_tier:1:development
    - gitlab:project:1
    - gitlab:project_env:1:ci
    - gitlab:project_env_tier:1:development
YAML
)"
KUBECONFIG_SERVER="$CLIENT_URL" write_kubeconfig "$KUBECONFIG_FILE" admin "admin=$ADMIN_TOKEN" "ci-job=$AGENT_TOKEN"

# --- files for clients --------------------------------------------------------------------------

(
  umask 077
  cat >"$ENV_FILE.tmp" <<ENV
# Written by scripts/cluster-up.sh. Source it to talk to the local cluster.
export GITLABK8S_CLUSTER_DIR='$CLUSTER_DIR'
export KUBECONFIG='$KUBECONFIG_FILE'
export GITLABK8S_KUBE_HOST='$CLIENT_URL'
export GITLABK8S_KUBE_CA_FILE='$PKI_DIR/ca.crt'
export GITLABK8S_ADMIN_TOKEN='$ADMIN_TOKEN'
export GITLABK8S_AGENT_TOKEN='$AGENT_TOKEN'
# The same token under its earlier name, for checkouts that still read it.
export GITLABK8S_CI_JOB_TOKEN='$AGENT_TOKEN'
export GITLABK8S_KUBECTL='$KUBECTL'
ENV
  mv "$ENV_FILE.tmp" "$ENV_FILE"
)

log "cluster ready: $CLIENT_URL"
log "  kubeconfig: $KUBECONFIG_FILE (contexts admin, ci-job)"
log "  env:        source $ENV_FILE"
log "  kubectl:    $scripts/kubectl.sh get nodes"
