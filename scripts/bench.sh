#!/usr/bin/env bash
# Benchmarks the provider side by side with Helm on the local cluster and writes BENCHMARKS.md.
#
# For generated charts of each size (scripts/bench/chart: BENCH_SIZES objects) it times, in the
# same run and on the same cluster:
#   terraform: plan of an empty configuration (the floor), plans of a provider that does nothing
#              (scripts/bench/minimal), plan with no change, plan with one changed value (with
#              all the plan's checks, with those that ask the cluster nothing: plan_checks =
#              "offline", and without any: "none"),
#              apply (install, upgrade), destroy; the provider's peak memory
#   helm:      template; upgrade --install with and without --wait; the helm-diff equivalent
#              `helm template | kubectl diff --server-side`; `kubectl delete namespace --wait`
#              of the same objects (the namespace controller's own time)
# and, for a crash-looping Deployment, the time from apply start to the reported failure against
# `helm upgrade --install --wait --timeout 5m` (run once, in the background of the rest).
# Medians over several runs; the issue's targets are checked as ratios of this run's own figures.
# At the defaults a run takes about 17 minutes on 2 cores; BENCH_SIZES="10 100" about 6 (helm's
# 5-minute failure wait runs in the background of the rest).
#
# BENCH_MODE=load and BENCH_MODE=sweep measure instead, with the same provider build, what the
# issue of faults and load asks: twenty environments applied at once (scripts/bench/load.sh) and
# the janitor example sweeping six hundred leftover namespaces (scripts/bench/sweep.sh). Each
# writes only its own section of BENCHMARKS.md, which a full run keeps.
#
# Settings (environment):
#   BENCH_MODE           full (default), load or sweep
#   BENCH_LOAD_ENVS      load: environments applied at once (default 20)
#   BENCH_LOAD_OBJECTS   load: objects of each environment's release (default 20)
#   BENCH_SWEEP_NAMESPACES  sweep: leftover namespaces, each with a small release (default 600)
#   BENCH_SWEEP_LIVE     sweep: namespaces of available environments, which must be left (default 20)
#   BENCH_SWEEP_PARALLELISM  sweep: the janitor's terraform -parallelism (default 10)
#   BENCH_SIZES          chart sizes in objects (default "10 100 1000")
#   BENCH_RUNS           runs per size (default 5)
#   BENCH_RUNS_LARGE     runs for sizes of 1000 objects or more (default 3)
#   BENCH_FAILURE_RUNS   runs of the provider's failure detection (default 3; 0 skips it)
#   BENCH_HELM_FAILURE   1 (default) runs helm's failure detection once; 0 skips it
#   BENCH_HELM_TIMEOUT   helm's --timeout for that run (default 5m, as the issue asks)
#   BENCH_CLASS_RUNS     runs of each failure class (testdata/charts/rollout: unschedulable pod,
#                        claim of a missing class, quota, failing readiness probe, failed hook,
#                        LoadBalancer without an address) by the provider, beside one helm run
#                        of each in the background (default 1; 0 skips them)
#   BENCH_PROVIDER       0 skips everything that needs the provider's resources (the empty and
#                        provider-only plans still run); default 1
#   BENCH_HELM           0 skips the helm and kubectl side; default 1
#   BENCH_PROFILE        1 adds one CPU-profiled pass over the largest size and puts the
#                        `go tool pprof -top` of each operation in the report (default 1)
#   BENCH_PROVIDER_BIN   a provider binary built from scripts/bench/provider elsewhere (say, from a
#                        candidate change in another checkout) to measure instead of this tree's
#   BENCH_BASELINE       a git ref (say, a commit before a change) whose scripts/bench/provider is
#                        built too, with the shipped flags, in a temporary worktree, and cached by
#                        commit in $GITLABK8S_BIN_DIR/bench-baseline. Each run of each size then
#                        measures the baseline's provider right before this tree's, on the same
#                        chart (install, plans, upgrade, destroy), so load on the machine hits both
#                        alike; the report gets a "Before and after" table. Default: none
#   BENCH_TUNNEL         1 also measures every plan and `helm template | kubectl diff` through a
#                        tunnel like the GitLab agent's (scripts/bench/tunnel: TLS ends there, a
#                        round-trip delay and a bandwidth limit on the clients' link), counting the
#                        requests each command makes and the bytes it receives; the failure runs are
#                        left out unless asked for. Default 0
#   BENCH_TUNNEL_LATENCY the tunnel's round-trip delay (default 40ms)
#   BENCH_HISTORY        with the tunnel, the upgrades a release has had when the no-change plan of
#                        a long-lived release is measured through it (default 10, the revisions
#                        Helm keeps); 0 leaves that plan out
#   BENCH_HISTORY_SIZES  the sizes that plan is measured at (default "10 100")
#   BENCH_TUNNEL_RATE    the tunnel's bandwidth each way (default 20Mbit)
#   BENCH_OUT            report path (default BENCHMARKS.md at the repository root)
#   BENCH_WORK           work folder (default: a new folder under ${TMPDIR:-/tmp}); kept for
#                        inspection: logs of every command, raw results, profiles
#
# The cluster is started when it is not running (scripts/cluster-up.sh) and left running.
set -euo pipefail
scripts="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=lib.sh
source "$scripts/lib.sh"
# shellcheck source=cluster/common.sh
source "$scripts/cluster/common.sh"
cd "$REPO_ROOT"

BENCH_SIZES="${BENCH_SIZES:-10 100 1000}"
BENCH_RUNS="${BENCH_RUNS:-5}"
BENCH_RUNS_LARGE="${BENCH_RUNS_LARGE:-3}"
BENCH_TUNNEL="${BENCH_TUNNEL:-0}"
BENCH_TUNNEL_LATENCY="${BENCH_TUNNEL_LATENCY:-40ms}"
BENCH_TUNNEL_RATE="${BENCH_TUNNEL_RATE:-20Mbit}"
BENCH_HISTORY="${BENCH_HISTORY:-10}"
BENCH_HISTORY_SIZES="${BENCH_HISTORY_SIZES:-10 100}"
# A tunnel run is about plans; the failure runs, which wait in the background, are left out
# unless asked for (their requests would be counted with the plans').
failure_default=3
[ "$BENCH_TUNNEL" = 1 ] && failure_default=0
BENCH_FAILURE_RUNS="${BENCH_FAILURE_RUNS:-$failure_default}"
BENCH_HELM_FAILURE="${BENCH_HELM_FAILURE:-$((failure_default > 0))}"
BENCH_HELM_TIMEOUT="${BENCH_HELM_TIMEOUT:-5m}"
BENCH_PROFILE="${BENCH_PROFILE:-1}"
BENCH_PROVIDER="${BENCH_PROVIDER:-1}"
BENCH_HELM="${BENCH_HELM:-1}"
BENCH_BASELINE="${BENCH_BASELINE:-}"
BENCH_MODE="${BENCH_MODE:-full}"
case "$BENCH_MODE" in
  full | load | sweep) ;;
  *) echo "bench: BENCH_MODE=$BENCH_MODE is not one of full, load, sweep" >&2; exit 1 ;;
esac
BENCH_OUT="${BENCH_OUT:-$REPO_ROOT/BENCHMARKS.md}"
WORK="${BENCH_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/gitlabk8s-bench.XXXXXX")}"
mkdir -p "$WORK/logs" "$WORK/profiles"
WORK="$(cd "$WORK" && pwd)"
RESULTS="$WORK/results.tsv"
META="$WORK/meta.txt"
: >"$RESULTS"
: >"$META"
log "work folder: $WORK"
# Other work on the machine slows every figure alike, but not evenly: the report states the load.
echo "load_start=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$META"
# The provider is built from the tree as it is now; say which commit that was, and whether the
# tree had changes on top of it.
echo "commit=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- internal main.go go.mod 2>/dev/null || echo ' with uncommitted changes to the provider')" >>"$META"

CHART="$scripts/bench/chart"
KUBE_CONTEXT="admin"

# --- tools ----------------------------------------------------------------------------------------

"$scripts/cluster-up.sh"
export KUBECONFIG="$KUBECONFIG_FILE"
# The kubeconfig every command of a measurement uses: the cluster's own, or the tunnel's.
BENCH_KUBECONFIG="$KUBECONFIG_FILE"
KUBECTL="$("$scripts/kubectl.sh" --print-path)"
HELM="$("$scripts/build-helm.sh")"
TERRAFORM="$("$scripts/ensure-terraform.sh")"

# The provider under test, installed into a filesystem mirror (scripts/provider-mirror.sh) the way
# a CI job would get it from a registry, so `terraform init` and every plugin start are the real
# ones: on Linux the package's front and the engine it shares (internal/front). The mirror's
# binaries are then rebuilt from scripts/bench/front and scripts/bench/provider: the provider's own
# mains plus the peak-RSS record and CPU profile this script asks for through environment variables.
provider_address="$(sed -n 's/^const RegistryAddress = "\(.*\)"$/\1/p' internal/provider/provider.go)"
[ -n "$provider_address" ] || { echo "bench: no RegistryAddress in internal/provider/provider.go" >&2; exit 1; }
provider_source="${provider_address#*/}" # namespace/type, as written in required_providers
"$scripts/provider-mirror.sh" "$WORK/mirror" >/dev/null
# The mirror also holds scripts/bench/minimal (below); Terraform may install both from it.
export TF_CLI_CONFIG_FILE="$WORK/cli.tfrc"
cat >"$TF_CLI_CONFIG_FILE" <<EOF
provider_installation {
  filesystem_mirror {
    path    = "$WORK/mirror"
    include = ["$provider_address", "registry.terraform.io/gitlabk8s-bench/minimal"]
  }
}
EOF
PROVIDER_BIN="$(find "$WORK/mirror/$provider_address" -type f -name 'terraform-provider-*' | head -n 1)"
[ -n "$PROVIDER_BIN" ] || { echo "bench: scripts/provider-mirror.sh left no provider for $provider_address" >&2; exit 1; }
provider_version="$(basename "$(dirname "$(dirname "$PROVIDER_BIN")")")"
ENGINE_NAME="gitlabk8s-engine_v$provider_version"
# The binary whose CPU profiles the report reads: the engine where the package has one.
ENGINE_BIN="$(dirname "$PROVIDER_BIN")/$ENGINE_NAME"
[ -f "$ENGINE_BIN" ] || ENGINE_BIN="$PROVIDER_BIN"
# helm_module_of BINARY prints the Helm module and version a Go binary was built with.
helm_module_of() {
  go version -m "$1" | awk '$1 == "dep" && $2 ~ /^helm\.sh\/helm\// { print $2, $3; exit }'
}
# install_package MIRROR PROVIDER [FRONT] puts a package into every copy MIRROR holds (one per
# registry host): with FRONT, FRONT under the provider's name and PROVIDER as its engine beside
# it; without, PROVIDER alone under the provider's name, as a package without a front. Each binary
# is copied, the baseline's as this tree's: a binary the linker has just written starts with
# another peak RSS (about 9 MiB more at 10 objects) than a copy of it, so all are written alike.
install_package() {
  local mirror="$1" provider="$2" front="${3:-}" dir
  while IFS= read -r dir; do
    if [ -n "$front" ]; then
      cp -f "$front" "$dir/$(basename "$PROVIDER_BIN")"
      cp -f "$provider" "$dir/$ENGINE_NAME"
    else
      cp -f "$provider" "$dir/$(basename "$PROVIDER_BIN")"
      rm -f "$dir/$ENGINE_NAME"
    fi
  done < <(find "$mirror" -type f -name "$(basename "$PROVIDER_BIN")" -exec dirname {} \;)
}
# package_bytes BINARY... prints the bytes of a package's binaries together.
package_bytes() { stat -c %s "$@" | awk '{ n += $1 } END { print n }'; }
provider_built="${BENCH_PROVIDER_BIN:-}"
front_built=""
if [ -n "${BENCH_PROVIDER_BIN:-}" ]; then
  log "measuring the supplied provider $BENCH_PROVIDER_BIN, without a front"
  echo "provider_build=supplied binary $BENCH_PROVIDER_BIN" >>"$META"
else
  log "rebuilding the mirror's provider $provider_version from scripts/bench/provider and scripts/bench/front"
  # Built as .goreleaser.yml builds what ships: static (CGO_ENABLED=0), -trimpath -s -w. (With cgo,
  # a dependency's import of package plugin makes the linker export every symbol: 109 MB instead of
  # 80 MB at 13c5edc.)
  provider_built="$WORK/provider.built"
  CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=$provider_version" -o "$provider_built" ./scripts/bench/provider
  if [ "$ENGINE_BIN" != "$PROVIDER_BIN" ]; then
    front_built="$WORK/front.built"
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=$provider_version" -o "$front_built" ./scripts/bench/front
  fi
  echo "provider_build=scripts/bench/provider and scripts/bench/front at this commit" >>"$META"
fi
install_package "$WORK/mirror" "$provider_built" "$front_built"
[ -n "$front_built" ] || ENGINE_BIN="$PROVIDER_BIN"
if [ -n "$front_built" ]; then
  echo "provider_bytes=$(package_bytes "$PROVIDER_BIN" "$ENGINE_BIN")" >>"$META"
else
  echo "provider_bytes=$(package_bytes "$PROVIDER_BIN")" >>"$META"
fi
echo "provider_helm=$(helm_module_of "$ENGINE_BIN")" >>"$META"

# The baseline's provider, when asked for: built from its own scripts/bench/provider as the one
# above, once per commit and version, with its scripts/bench/front where it has one.
build_baseline() {
  local commit="$1" out="$BIN_DIR/bench-baseline/$1-$provider_version/terraform-provider-gitlabk8s"
  local src="$WORK/baseline-src" status=0
  if [ ! -x "$out" ]; then
    mkdir -p "$(dirname "$out")"
    log "building the baseline's provider from scripts/bench/provider at $commit"
    git worktree add --detach --quiet "$src" "$commit" >&2
    (cd "$src" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=$provider_version" \
      -o "$out.$$" ./scripts/bench/provider) || status=$?
    if [ "$status" = 0 ] && [ -d "$src/scripts/bench/front" ]; then
      (cd "$src" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=$provider_version" \
        -o "$out.front" ./scripts/bench/front) || status=$?
    fi
    git worktree remove --force "$src" >&2
    [ "$status" = 0 ] || return "$status"
    mv -f "$out.$$" "$out"
  fi
  echo "$out"
}
baseline_cli_config="$WORK/cli-baseline.tfrc"
if [ -n "$BENCH_BASELINE" ]; then
  [ "$BENCH_PROVIDER" = 1 ] || { echo "bench: BENCH_BASELINE compares providers; it needs BENCH_PROVIDER=1" >&2; exit 1; }
  baseline_commit="$(git rev-parse --verify --quiet "$BENCH_BASELINE^{commit}")" ||
    { echo "bench: BENCH_BASELINE=$BENCH_BASELINE names no commit; give a commit, branch or tag" >&2; exit 1; }
  baseline_bin="$(build_baseline "$baseline_commit")"
  # A mirror of its own: Terraform checks the provider against the hash `terraform init` locked.
  cp -r "$WORK/mirror" "$WORK/mirror-baseline"
  baseline_front=""
  [ -f "$baseline_bin.front" ] && baseline_front="$baseline_bin.front"
  install_package "$WORK/mirror-baseline" "$baseline_bin" "$baseline_front"
  cat >"$baseline_cli_config" <<EOF
provider_installation {
  filesystem_mirror {
    path    = "$WORK/mirror-baseline"
    include = ["$provider_address"]
  }
}
EOF
  {
    echo "baseline=$(git rev-parse --short "$baseline_commit")"
    echo "baseline_bytes=$(package_bytes "$baseline_bin" ${baseline_front:+"$baseline_front"})"
    echo "baseline_helm=$(helm_module_of "$baseline_bin")"
  } >>"$META"
fi
export TF_IN_AUTOMATION=1 TF_INPUT=0 CHECKPOINT_DISABLE=1
unset TF_LOG TF_LOG_PROVIDER
# The provider reads GitLab's predefined variables; a benchmark run is not a CI job.
for v in CI_PROJECT_ID CI_PROJECT_PATH_SLUG CI_ENVIRONMENT_NAME CI_ENVIRONMENT_SLUG CI_PIPELINE_URL \
  CI_JOB_URL CI_COMMIT_SHA CI_MERGE_REQUEST_IID; do unset "$v"; done
while IFS= read -r v; do unset "$v"; done < <(env | sed -n 's/^\(GITLABK8S_[A-Z_]*\)=.*/\1/p' | grep -v '^GITLABK8S_BIN_DIR$\|^GITLABK8S_CLUSTER_DIR$')

# Helm keeps its caches and configuration in the work folder, away from the user's.
export HELM_CACHE_HOME="$WORK/helm/cache" HELM_CONFIG_HOME="$WORK/helm/config" HELM_DATA_HOME="$WORK/helm/data"

kubectl() { "$KUBECTL" --kubeconfig "$BENCH_KUBECONFIG" --context "$KUBE_CONTEXT" "$@"; }

# --- the tunnel -----------------------------------------------------------------------------------

TUNNEL_KUBECONFIG="$WORK/tunnel-kubeconfig"
tunnel_control=""
if [ "$BENCH_TUNNEL" = 1 ]; then
  go build -o "$WORK/tunnel" ./scripts/bench/tunnel
  rm -f "$WORK/tunnel.addr"
  "$WORK/tunnel" -upstream "$APISERVER_URL" -ca "$PKI_DIR/ca.crt" -cert "$PKI_DIR/apiserver.crt" \
    -key "$PKI_DIR/apiserver.key" -latency "$BENCH_TUNNEL_LATENCY" -rate "$BENCH_TUNNEL_RATE" \
    -ready "$WORK/tunnel.addr" >"$WORK/logs/tunnel.log" 2>&1 &
  tunnel_pid=$!
  trap 'kill "$tunnel_pid" 2>/dev/null || true' EXIT
  for _ in $(seq 1 100); do [ -s "$WORK/tunnel.addr" ] && break; sleep 0.1; done
  [ -s "$WORK/tunnel.addr" ] || { echo "bench: the tunnel did not start; see $WORK/logs/tunnel.log" >&2; exit 1; }
  tunnel_listen="$(sed -n 1p "$WORK/tunnel.addr")"
  tunnel_control="$(sed -n 2p "$WORK/tunnel.addr")"
  # The cluster's kubeconfig with every server replaced by the tunnel's address; the tunnel
  # serves the API server's certificate, whose addresses include 127.0.0.1, so TLS verifies.
  sed "s#server: $APISERVER_URL#server: https://$tunnel_listen#" "$KUBECONFIG_FILE" >"$TUNNEL_KUBECONFIG"
  grep -q "server: https://$tunnel_listen" "$TUNNEL_KUBECONFIG" ||
    { echo "bench: no server $APISERVER_URL in $KUBECONFIG_FILE to send through the tunnel" >&2; exit 1; }
  {
    echo "tunnel=1"
    echo "tunnel_latency=$BENCH_TUNNEL_LATENCY"
    echo "tunnel_rate=$BENCH_TUNNEL_RATE"
  } >>"$META"
  log "tunnel at $tunnel_listen ($BENCH_TUNNEL_LATENCY round trip, $BENCH_TUNNEL_RATE each way)"
fi

# --- measuring ------------------------------------------------------------------------------------

# measure SIZE METRIC RUN EXPECT COMMAND... runs COMMAND, logs its output, and appends
# "size metric run seconds peak-provider-RSS-KiB provider-CPU-seconds provider-processes requests
# bytes" to the results: the largest peak RSS among the provider processes COMMAND started, their
# CPU time added up, and how many there were; for a command measured through the tunnel
# (measure_tunnel), the requests it made and the bytes it received ("-" otherwise). EXPECT is ok
# (exit 0), fail (non-zero), diff (0 or 1, as diff tools answer) or changes (2, terraform plan
# -detailed-exitcode's "changes planned"). An unexpected outcome stops the run.
measure() {
  local size="$1" metric="$2" run="$3" expect="$4"
  shift 4
  local out="$WORK/logs/$size-$metric-$run.log" rss="$WORK/logs/$size-$metric-$run.rss"
  local start end status=0 seconds peak cpu procs
  : >"$rss"
  # kubectl and helm start with an empty discovery cache, as in a CI job's fresh container, and
  # the provider with an empty cache folder, which only the processes of this command share;
  # MEASURE_CACHE names an earlier command's folder instead, as a CI job's cache keeps it.
  local cache="${MEASURE_CACHE:-$WORK/kubecache/$size-$metric-$run}"
  mkdir -p "$cache"
  local counted="${TUNNEL_COUNT:-}" requests="-" bytes="-"
  [ -z "$counted" ] || curl -fsS "http://$tunnel_control/reset" >/dev/null
  start="$EPOCHREALTIME"
  KUBECACHEDIR="$cache" GITLABK8S_CACHE_DIR="$cache/provider" GITLABK8S_BENCH_RSS_FILE="$rss" "$@" >"$out" 2>&1 || status=$?
  end="$EPOCHREALTIME"
  # A shared engine writes its record once Terraform is gone, a poll later: wait for it (not
  # timed: the command has ended for its user).
  if grep -q ' front$' "$rss"; then
    local waited=0
    while ! grep -q ' engine$' "$rss" && [ "$waited" -lt 300 ]; do
      sleep 0.01
      waited=$((waited + 1))
    done
  fi
  if [ -n "$counted" ]; then
    curl -fsS "http://$tunnel_control/stats" >"$WORK/logs/$size-$metric-$run.requests"
    read -r requests bytes <"$WORK/logs/$size-$metric-$run.requests"
  fi
  case "$expect:$status" in
    ok:0 | diff:0 | diff:1 | changes:2) ;;
    fail:0 | ok:* | diff:* | changes:*)
      log "bench: $metric (size $size, run $run) exited $status, expected $expect; last lines of $out:"
      tail -n 30 "$out" >&2
      exit 1
      ;;
  esac
  seconds="$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.3f", e - s }')"
  peak="$(awk '$2 > max { max = $2 } END { print max + 0 }' "$rss")"
  cpu="$(awk '{ ms += $3 } END { printf "%.3f", ms / 1000 }' "$rss")"
  procs="$(wc -l <"$rss")"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$size" "$metric" "$run" "$seconds" "$peak" "$cpu" "$procs" "$requests" "$bytes" >>"$RESULTS"
  if [ -n "$counted" ]; then
    log "  $metric size=$size run=$run: ${seconds}s, $requests requests, $bytes bytes received"
  elif [ "$procs" -gt 0 ]; then
    log "  $metric size=$size run=$run: ${seconds}s (provider: $procs processes, ${cpu}s CPU, peak RSS ${peak} KiB)"
  else
    log "  $metric size=$size run=$run: ${seconds}s"
  fi
}

# measure_tunnel SIZE METRIC RUN EXPECT COMMAND... is measure with every kubectl and helm command
# sent through the tunnel and the requests counted; terraform gets the tunnel's kubeconfig by
# -var kubeconfig=... on its command line.
measure_tunnel() { BENCH_KUBECONFIG="$TUNNEL_KUBECONFIG" TUNNEL_COUNT=1 measure "$@"; }

runs_for() { if [ "$1" -ge 1000 ]; then echo "$BENCH_RUNS_LARGE"; else echo "$BENCH_RUNS"; fi; }

# wait_namespace_gone NAME waits for a namespace to disappear (a failed run may leave one behind).
wait_namespace_gone() {
  kubectl delete namespace "$1" --ignore-not-found --wait=true --timeout=5m >/dev/null
}

# remove_environment NAME deletes the namespace an earlier, interrupted run left for the
# environment NAME (found by the provider's ownership marker), so every run starts from nothing.
remove_environment() {
  local ns
  for ns in $(kubectl get namespaces -l app.kubernetes.io/managed-by=gitlabk8s -o go-template='{{range .items}}{{if eq (index .metadata.annotations "gitlabk8s.io/environment") "'"$1"'"}}{{.metadata.name}} {{end}}{{end}}'); do
    log "removing namespace $ns, left by an earlier run for environment $1"
    wait_namespace_gone "$ns"
  done
}

# --- terraform configurations ---------------------------------------------------------------------

tf() { "$TERRAFORM" -chdir="$1" "${@:2}" -no-color; }
# tf_baseline is tf with the baseline's provider.
tf_baseline() { TF_CLI_CONFIG_FILE="$baseline_cli_config" tf "$@"; }
tf_init() { "$TERRAFORM" -chdir="$1" init -input=false -no-color >"$WORK/logs/init-$(basename "$1").log" 2>&1; }

# provider_block prints the required_providers and provider blocks every configuration here starts with.
provider_block() {
  cat <<EOF
terraform {
  required_providers {
    gitlabk8s = {
      source  = "$provider_source"
      version = "$provider_version"
    }
  }
}

variable "kubeconfig" {
  type    = string
  default = "$KUBECONFIG_FILE"
}

provider "gitlabk8s" {
  config_path    = var.kubeconfig
  config_context = "$KUBE_CONTEXT"
}
EOF
}

# write_release_config DIR ENVIRONMENT OBJECTS CRASHLOOP writes a configuration of one environment
# and one release of the bench chart into it. The revision variable is the "one changed value".
write_release_config() {
  local dir="$1" environment="$2" objects="$3" crash_loop="$4"
  mkdir -p "$dir"
  {
    provider_block
    cat <<EOF

variable "revision" {
  type    = string
  default = "1"
}

# "offline" measures the plan without what it asks the cluster (its OpenAPI schemas, the
# server-side dry run); "none" without any check (schemas, API versions, the dry run).
variable "plan_checks" {
  type    = string
  default = "all"
}

resource "gitlabk8s_environment" "bench" {
  name = "$environment"
}

resource "gitlabk8s_release" "bench" {
  name      = "bench"
  namespace = gitlabk8s_environment.bench.namespace
  chart       = "$CHART"
  plan_checks = var.plan_checks
  values = [yamlencode({
    objects   = $objects
    revision  = var.revision
    crashLoop = $crash_loop
  })]
}

output "namespace" {
  value = gitlabk8s_environment.bench.namespace
}
EOF
  } >"$dir/main.tf"
  tf_init "$dir"
}

case "$BENCH_MODE" in
  load)
    # shellcheck source=bench/load.sh
    source "$scripts/bench/load.sh"
    exit 0
    ;;
  sweep)
    # shellcheck source=bench/sweep.sh
    source "$scripts/bench/sweep.sh"
    exit 0
    ;;
esac

# The floor: a configuration with nothing in it, which every Terraform user pays for.
floor_dir="$WORK/tf-empty"
mkdir -p "$floor_dir"
echo 'terraform {}' >"$floor_dir/main.tf"
tf_init "$floor_dir"
# The provider configured but managing nothing: the floor plus starting and configuring it.
provider_only_dir="$WORK/tf-provider-only"
mkdir -p "$provider_only_dir"
provider_block >"$provider_only_dir/main.tf"
tf_init "$provider_only_dir"
baseline_provider_only_dir="$WORK/tf-baseline-provider-only"
if [ -n "$BENCH_BASELINE" ]; then
  mkdir -p "$baseline_provider_only_dir"
  provider_block >"$baseline_provider_only_dir/main.tf"
  TF_CLI_CONFIG_FILE="$baseline_cli_config" tf_init "$baseline_provider_only_dir"
fi

# What any provider costs: scripts/bench/minimal, a terraform-plugin-framework provider with one
# resource kept in the state alone (no network, no dependency beyond the framework), installed into
# the same mirror. Its plans are the least any Terraform provider can take here.
minimal_version="0.0.1"
minimal_dir="$WORK/mirror/registry.terraform.io/gitlabk8s-bench/minimal/$minimal_version/$(go env GOOS)_$(go env GOARCH)"
mkdir -p "$minimal_dir"
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$minimal_dir/terraform-provider-minimal_v$minimal_version" ./scripts/bench/minimal
minimal_provider_dir="$WORK/tf-minimal"
mkdir -p "$minimal_provider_dir"
cat >"$minimal_provider_dir/main.tf" <<EOF
terraform {
  required_providers {
    minimal = {
      source  = "gitlabk8s-bench/minimal"
      version = "$minimal_version"
    }
  }
}

provider "minimal" {}

variable "revision" {
  type    = string
  default = "1"
}

resource "minimal_object" "one" {
  name  = "one"
  value = var.revision
}
EOF
tf_init "$minimal_provider_dir"
"$TERRAFORM" -chdir="$minimal_provider_dir" apply -auto-approve -input=false -no-color >"$WORK/logs/init-minimal-apply.log" 2>&1

# --- helm -----------------------------------------------------------------------------------------

helm() { "$HELM" --kubeconfig "$BENCH_KUBECONFIG" --kube-context "$KUBE_CONTEXT" "$@"; }
helm_values() { echo --set "objects=$1" --set-string "revision=$2"; }
# shellcheck disable=SC2046 # helm_values prints flags to split
helm_template() { helm template bench "$CHART" --namespace "$1" $(helm_values "$2" "$3"); }
# shellcheck disable=SC2046
helm_upgrade() { helm upgrade --install bench "$CHART" --namespace "$1" $(helm_values "$2" "$3") "${@:4}"; }
# helm-diff's equivalent: render, then ask the API server what applying it would change.
# --force-conflicts: fields Helm set are owned by its field manager, not kubectl's.
helm_diff() {
  helm_template "$1" "$2" "$3" |
    kubectl diff --server-side --force-conflicts --namespace "$1" -f -
}

# --- the crash-looping Deployment, Helm's side, in the background -----------------------------------

helm_failure_pid=""
helm_failure_ns=bench-helm-failure
if [ "$BENCH_HELM" = 1 ] && [ "$BENCH_HELM_FAILURE" = 1 ]; then
  wait_namespace_gone "$helm_failure_ns"
  kubectl create namespace "$helm_failure_ns" >/dev/null
  log "helm failure detection: upgrade --install --wait --timeout $BENCH_HELM_TIMEOUT in the background"
  (
    measure 10 helm_failure 1 fail \
      helm upgrade --install bench "$CHART" --namespace "$helm_failure_ns" \
      --set objects=10 --set crashLoop=true --wait --timeout "$BENCH_HELM_TIMEOUT"
  ) &
  helm_failure_pid=$!
fi

# --- the sizes ------------------------------------------------------------------------------------

for size in $BENCH_SIZES; do
  runs="$(runs_for "$size")"
  log "size $size: $runs runs"
  dir="$WORK/tf-$size"
  if [ "$BENCH_PROVIDER" = 1 ]; then
    remove_environment "bench/n$size"
    write_release_config "$dir" "bench/n$size" "$size" false
  fi
  baseline_dir="$WORK/tf-baseline-$size"
  if [ -n "$BENCH_BASELINE" ]; then
    remove_environment "bench/baseline-n$size"
    TF_CLI_CONFIG_FILE="$baseline_cli_config" write_release_config "$baseline_dir" "bench/baseline-n$size" "$size" false
  fi
  helm_ns="bench-helm-n$size"
  helm_nowait_ns="bench-helm-nowait-n$size"
  if [ "$BENCH_HELM" = 1 ]; then
    wait_namespace_gone "$helm_ns"
    wait_namespace_gone "$helm_nowait_ns"
  fi

  for run in $(seq 1 "$runs"); do
    # The baseline's provider first, the same life on an environment of its own, so that whatever
    # else loads the machine falls on both alike.
    if [ -n "$BENCH_BASELINE" ]; then
      measure "$size" baseline_apply_install "$run" ok tf_baseline "$baseline_dir" apply -auto-approve -input=false -var revision=1
      measure "$size" baseline_plan_provider_only "$run" ok tf_baseline "$baseline_provider_only_dir" plan -input=false
      measure "$size" baseline_plan_nochange "$run" ok tf_baseline "$baseline_dir" plan -input=false -detailed-exitcode -var revision=1
      measure "$size" baseline_plan_change "$run" changes tf_baseline "$baseline_dir" plan -input=false -detailed-exitcode -var revision=2
      measure "$size" baseline_apply_upgrade "$run" ok tf_baseline "$baseline_dir" apply -auto-approve -input=false -var revision=2
      measure "$size" baseline_destroy "$run" ok tf_baseline "$baseline_dir" destroy -auto-approve -input=false -var revision=2
    fi
    # Terraform and the provider: one environment's life. The floors run while the release is
    # installed, so they see the same cluster load as the plans they are compared with.
    if [ "$BENCH_PROVIDER" = 1 ]; then
      measure "$size" apply_install "$run" ok tf "$dir" apply -auto-approve -input=false -var revision=1
    fi
    measure "$size" plan_empty "$run" ok tf "$floor_dir" plan -input=false
    measure "$size" plan_provider_only "$run" ok tf "$provider_only_dir" plan -input=false
    measure "$size" plan_minimal_nochange "$run" ok tf "$minimal_provider_dir" plan -input=false -detailed-exitcode -var revision=1
    measure "$size" plan_minimal_change "$run" changes tf "$minimal_provider_dir" plan -input=false -detailed-exitcode -var revision=2
    if [ "$BENCH_PROVIDER" = 1 ]; then
      measure "$size" plan_nochange "$run" ok tf "$dir" plan -input=false -detailed-exitcode -var revision=1
      measure "$size" plan_change "$run" changes tf "$dir" plan -input=false -detailed-exitcode -var revision=2
      measure "$size" plan_change_offline "$run" changes tf "$dir" plan -input=false -detailed-exitcode -var revision=2 -var plan_checks=offline
      measure "$size" plan_change_nochecks "$run" changes tf "$dir" plan -input=false -detailed-exitcode -var revision=2 -var plan_checks=none
      if [ "$BENCH_TUNNEL" = 1 ]; then
        measure_tunnel "$size" tunnel_plan_nochange "$run" ok tf "$dir" plan -input=false -detailed-exitcode -var revision=1 -var kubeconfig="$TUNNEL_KUBECONFIG"
        measure_tunnel "$size" tunnel_plan_change "$run" changes tf "$dir" plan -input=false -detailed-exitcode -var revision=2 -var kubeconfig="$TUNNEL_KUBECONFIG"
        MEASURE_CACHE="$WORK/kubecache/$size-tunnel_plan_change-$run" \
          measure_tunnel "$size" tunnel_plan_change_warm "$run" changes tf "$dir" plan -input=false -detailed-exitcode -var revision=2 -var kubeconfig="$TUNNEL_KUBECONFIG"
      fi
      measure "$size" apply_upgrade "$run" ok tf "$dir" apply -auto-approve -input=false -var revision=2
      if [ "$BENCH_TUNNEL" = 1 ] && [ "$BENCH_HISTORY" -gt 0 ] && [[ " $BENCH_HISTORY_SIZES " == *" $size "* ]]; then
        # A release a pipeline upgrades on every merge: the upgrades up to BENCH_HISTORY, then
        # its no-change plan.
        for revision in $(seq 3 $((BENCH_HISTORY + 1))); do
          tf "$dir" apply -auto-approve -input=false -var revision="$revision" >"$WORK/logs/$size-history-apply-$run-$revision.log" 2>&1 ||
            { tail -n 30 "$WORK/logs/$size-history-apply-$run-$revision.log" >&2; exit 1; }
        done
        measure_tunnel "$size" tunnel_plan_nochange_history "$run" ok tf "$dir" plan -input=false -detailed-exitcode -var revision=$((BENCH_HISTORY + 1)) -var kubeconfig="$TUNNEL_KUBECONFIG"
      fi
      measure "$size" destroy "$run" ok tf "$dir" destroy -auto-approve -input=false -var revision=2
    fi

    # Helm on the same objects.
    [ "$BENCH_HELM" = 1 ] || continue
    # The same order as the provider's: an install that waits, the two diffs against it, an
    # upgrade that waits, then without waiting, and the namespace controller's own delete.
    measure "$size" helm_template "$run" ok helm_template "$helm_ns" "$size" 1
    kubectl create namespace "$helm_ns" >/dev/null
    measure "$size" helm_install_wait "$run" ok helm_upgrade "$helm_ns" "$size" 1 --wait --timeout 10m
    measure "$size" helm_diff_nochange "$run" diff helm_diff "$helm_ns" "$size" 1
    measure "$size" helm_diff_change "$run" diff helm_diff "$helm_ns" "$size" 2
    if [ "$BENCH_TUNNEL" = 1 ]; then
      measure_tunnel "$size" tunnel_helm_diff_nochange "$run" diff helm_diff "$helm_ns" "$size" 1
      measure_tunnel "$size" tunnel_helm_diff_change "$run" diff helm_diff "$helm_ns" "$size" 2
    fi
    measure "$size" helm_upgrade_wait "$run" ok helm_upgrade "$helm_ns" "$size" 2 --wait --timeout 10m
    measure "$size" helm_upgrade "$run" ok helm_upgrade "$helm_ns" "$size" 3
    measure "$size" namespace_delete "$run" ok kubectl delete namespace "$helm_ns" --wait=true --timeout=10m
    kubectl create namespace "$helm_nowait_ns" >/dev/null
    measure "$size" helm_install "$run" ok helm_upgrade "$helm_nowait_ns" "$size" 1
    kubectl delete namespace "$helm_nowait_ns" --wait=true --timeout=10m >/dev/null
  done
done

# --- the crash-looping Deployment, the provider's side ----------------------------------------------

if [ "$BENCH_PROVIDER" = 1 ] && [ "$BENCH_FAILURE_RUNS" -gt 0 ]; then
  log "provider failure detection: $BENCH_FAILURE_RUNS runs"
  dir="$WORK/tf-failure"
  remove_environment "bench/failure"
  write_release_config "$dir" "bench/failure" 10 true
  for run in $(seq 1 "$BENCH_FAILURE_RUNS"); do
    measure 10 provider_failure "$run" fail tf "$dir" apply -auto-approve -input=false
    # The failure must be the crash loop, named, not anything else.
    if ! grep -q CrashLoopBackOff "$WORK/logs/10-provider_failure-$run.log"; then
      log "bench: the failed apply does not name CrashLoopBackOff; last lines:"
      tail -n 30 "$WORK/logs/10-provider_failure-$run.log" >&2
      exit 1
    fi
    tf "$dir" destroy -auto-approve -input=false >"$WORK/logs/10-provider_failure-destroy-$run.log" 2>&1
  done
fi

# --- failure classes, side by side with helm ---------------------------------------------------------

# Each class: name, the reason the provider's error must name, values (YAML), blocked_timeout
# ("" for a failure that cannot clear and fails without it), and the pods quota of the namespace
# ("" for none). Helm gets the same chart and values, with --wait --wait-for-jobs.
BENCH_CLASS_RUNS="${BENCH_CLASS_RUNS:-$((failure_default > 0))}"
FAILURE_CLASSES=(
  "unschedulable|Unschedulable|{deployment: {resources: {requests: {ephemeral-storage: 100Ti}}}}|10s|"
  "claim_class|ProvisioningFailed|{claim: {enabled: true, class: bench-missing}}||"
  "quota|exceeded quota|{deployment: {replicas: 2}}||1"
  "unready|Unhealthy|{deployment: {podLabels: {gitlabk8s.test/fail: Unready}}}|10s|"
  "hook|BackoffLimitExceeded|{hook: {enabled: true, podLabels: {gitlabk8s.test/fail: Error}}}||"
  "loadbalancer|LoadBalancerPending|{service: {type: LoadBalancer, loadBalancerClass: gitlabk8s.test/none}}|10s|"
)
ROLLOUT_CHART="$REPO_ROOT/testdata/charts/rollout"
class_helm_pids=()

# write_class_config DIR ENVIRONMENT VALUES BLOCKED QUOTA writes a release of the rollout chart.
write_class_config() {
  local dir="$1" environment="$2" values="$3" blocked="$4" quota="$5" quota_line="" blocked_line=""
  [ -z "$quota" ] || quota_line="resource_quota = { pods = \"$quota\" }"
  [ -z "$blocked" ] || blocked_line="blocked_timeout = \"$blocked\""
  mkdir -p "$dir"
  {
    provider_block
    cat <<TF

resource "gitlabk8s_environment" "bench" {
  name = "$environment"
  $quota_line
}

resource "gitlabk8s_release" "bench" {
  name      = "bench"
  namespace = gitlabk8s_environment.bench.namespace
  chart     = "$ROLLOUT_CHART"
  timeout   = "5m"
  atomic    = false
  values    = [yamlencode(yamldecode("$values"))]
  $blocked_line
}
TF
  } >"$dir/main.tf"
  tf_init "$dir"
}

if [ "$BENCH_CLASS_RUNS" -gt 0 ]; then
  for spec in "${FAILURE_CLASSES[@]}"; do
    IFS='|' read -r class reason values blocked quota <<<"$spec"
    if [ "$BENCH_HELM" = 1 ]; then
      ns="bench-helm-${class//_/-}"
      wait_namespace_gone "$ns"
      kubectl create namespace "$ns" >/dev/null
      [ -z "$quota" ] || kubectl -n "$ns" create quota pods --hard="pods=$quota" >/dev/null
      printf '%s\n' "$values" >"$WORK/helm-$class.yaml"
      log "failure class $class: helm upgrade --install --wait --timeout $BENCH_HELM_TIMEOUT in the background"
      (
        measure 0 "helm_${class}_failure" 1 fail \
          helm upgrade --install bench "$ROLLOUT_CHART" --namespace "$ns" -f "$WORK/helm-$class.yaml" \
          --wait --wait-for-jobs --timeout "$BENCH_HELM_TIMEOUT"
        kubectl delete namespace "$ns" --wait=false >/dev/null
      ) &
      class_helm_pids+=("$!")
    fi
    if [ "$BENCH_PROVIDER" = 1 ]; then
      log "failure class $class: $BENCH_CLASS_RUNS provider runs"
      dir="$WORK/tf-class-$class"
      remove_environment "bench/class-$class"
      write_class_config "$dir" "bench/class-$class" "$values" "$blocked" "$quota"
      for run in $(seq 1 "$BENCH_CLASS_RUNS"); do
        measure 0 "provider_${class}_failure" "$run" fail tf "$dir" apply -auto-approve -input=false
        if ! grep -q "$reason" "$WORK/logs/0-provider_${class}_failure-$run.log"; then
          log "bench: the failed apply of class $class does not name $reason; last lines:"
          tail -n 30 "$WORK/logs/0-provider_${class}_failure-$run.log" >&2
          exit 1
        fi
        tf "$dir" destroy -auto-approve -input=false >"$WORK/logs/0-provider_${class}_failure-destroy-$run.log" 2>&1
      done
    fi
  done
fi

# --- profiles -------------------------------------------------------------------------------------

if [ "$BENCH_PROVIDER" = 1 ] && [ "$BENCH_PROFILE" = 1 ]; then
  # shellcheck disable=SC2086 # the sizes are a list
  size="$(printf '%s\n' $BENCH_SIZES | sort -n | tail -n 1)"
  log "profiling size $size"
  dir="$WORK/tf-$size"
  profile() {
    local op="$1"
    shift
    mkdir -p "$WORK/profiles/$op"
    GITLABK8S_BENCH_CPUPROFILE_DIR="$WORK/profiles/$op" "$@" >"$WORK/logs/profile-$op.log" 2>&1
    {
      go tool pprof -top -cum -nodecount=30 "$ENGINE_BIN" "$WORK/profiles/$op"/cpu-*.pprof 2>/dev/null
      echo
      echo "flat:"
      go tool pprof -top -nodecount=15 "$ENGINE_BIN" "$WORK/profiles/$op"/cpu-*.pprof 2>/dev/null |
        sed -n '/flat%/,$p'
    } >"$WORK/profiles/$op.top" || true
  }
  # Package initialization runs before main, so no CPU profile sees it, yet every provider
  # process pays it. GODEBUG=inittrace=1 reports it per package; run alone, the binary initializes,
  # says it is a plugin and exits.
  {
    for i in 1 2 3; do
      GODEBUG=inittrace=1 "$ENGINE_BIN" </dev/null 2>&1 >/dev/null |
        awk -v run="$i" '$1 == "init" { ms += $5 } END { printf "run %d: package initialization %.0f ms of clock time\n", run, ms }'
    done
    echo
    echo "the ten slowest packages (last run): package, clock ms, bytes allocated"
    GODEBUG=inittrace=1 "$ENGINE_BIN" </dev/null 2>&1 >/dev/null |
      awk '$1 == "init" { print $2, $5, $8 }' | sort -k2 -g -r | head -n 10
  } >"$WORK/profiles/package_init.top" || true
  profile apply_install tf "$dir" apply -auto-approve -input=false -var revision=1
  profile plan_nochange tf "$dir" plan -input=false -var revision=1
  profile plan_change tf "$dir" plan -input=false -var revision=2
  profile apply_upgrade tf "$dir" apply -auto-approve -input=false -var revision=2
  profile destroy tf "$dir" destroy -auto-approve -input=false -var revision=2
fi

if [ "${#class_helm_pids[@]}" -gt 0 ]; then
  log "waiting for helm's runs of the failure classes (up to $BENCH_HELM_TIMEOUT from their start)"
  wait "${class_helm_pids[@]}"
fi
if [ -n "$helm_failure_pid" ]; then
  log "waiting for helm's failure detection (up to $BENCH_HELM_TIMEOUT from its start)"
  wait "$helm_failure_pid"
  kubectl delete namespace "$helm_failure_ns" --wait=false >/dev/null
fi

# --- report ---------------------------------------------------------------------------------------

{
  echo "date=$(date -u +%FT%TZ)"
  echo "cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
  echo "cores=$(nproc)"
  echo "memory=$(free -h | awk '/^Mem:/ {print $2}')"
  echo "kernel=$(uname -sr)"
  echo "load=$(cut -d' ' -f1-3 /proc/loadavg)"
  echo "go=$(go env GOVERSION)"
  echo "terraform=$("$TERRAFORM" version | head -n 1)"
  echo "helm=$("$HELM" version --short)"
  echo "kubectl=$("$KUBECTL" version --client -o yaml | awk '$1 == "gitVersion:" {print $2; exit}')"
  echo "server=$(kubectl get --raw /version | sed -n 's/.*"gitVersion": *"\([^"]*\)".*/\1/p')"
  echo "kwok=$KWOK_VERSION"
  echo "sizes=$BENCH_SIZES"
  echo "runs=$BENCH_RUNS"
  echo "runs_large=$BENCH_RUNS_LARGE"
  echo "failure_runs=$BENCH_FAILURE_RUNS"
  echo "class_runs=$BENCH_CLASS_RUNS"
  echo "helm_timeout=$BENCH_HELM_TIMEOUT"
  echo "provider=$BENCH_PROVIDER"
  echo "helm_side=$BENCH_HELM"
  echo "baseline_ref=$BENCH_BASELINE"
} >>"$META"

go run ./scripts/bench/report -results "$RESULTS" -meta "$META" -profiles "$WORK/profiles" \
  -notes "$scripts/bench/notes.md" -out "$BENCH_OUT"
log "wrote $BENCH_OUT (raw results and logs in $WORK)"
