# shellcheck shell=bash
# BENCH_MODE=sweep of scripts/bench.sh, which sources this file once the provider is built and
# installed into the mirror, with its helpers (log, kubectl, tf, tf_init, write_release_config,
# remove_environment) defined.
#
# The seed's scale: BENCH_SWEEP_NAMESPACES leftover environment namespaces (default 600), each
# holding a small release (three ConfigMaps of scripts/bench/chart), and BENCH_SWEEP_LIVE
# namespaces of environments GitLab lists as available (default 20). The janitor example
# (examples/janitor) then runs as its pipeline job runs it: plan with its import blocks, apply,
# destroy, with -parallelism=BENCH_SWEEP_PARALLELISM (default 10, the job's SWEEP_PARALLELISM).
# The run fails unless every leftover is gone and every live namespace is still there with the
# UID it had. GitLab's environments API is internal/gitlabstate's stand-in.
#
# Seeding is cheap but faithful: one environment and release are applied with the provider, and
# their namespace and objects (the release's Helm record included) are copied, renamed, into the
# others with one kubectl call. The requests each janitor step made are counted in the API
# server's audit log when the cluster was started with GITLABK8S_AUDIT_LOG=1 (by user agent), and
# the API server's apiserver_request_total (every client's, the namespace controller's included)
# always. Writes the section "sweep" of $BENCH_OUT, leaving the rest of it as it is.

BENCH_SWEEP_NAMESPACES="${BENCH_SWEEP_NAMESPACES:-600}"
BENCH_SWEEP_LIVE="${BENCH_SWEEP_LIVE:-20}"
BENCH_SWEEP_PARALLELISM="${BENCH_SWEEP_PARALLELISM:-10}"

SWEEP="$WORK/sweep"
mkdir -p "$SWEEP"
sweep_project_id=4242
sweep_project_slug=bench-sweep
AUDIT_LOG="$CLUSTER_DIR/logs/audit.log"

# --- GitLab: the live environments are available; the leftovers' are gone ----------------------

for i in $(seq -f '%04g' 1 "$BENCH_SWEEP_LIVE"); do echo "available live-$i"; done >"$SWEEP/environments"
go build -o "$SWEEP/gitlabstate" ./internal/gitlabstate/cmd/gitlabstate
rm -f "$SWEEP/gitlab.env"
"$SWEEP/gitlabstate" -quiet -project-id "$sweep_project_id" -project-path "bench/sweep" \
  -environments "$SWEEP/environments" -env-file "$SWEEP/gitlab.env" 2>"$SWEEP/gitlabstate.log" &
gitlab_pid=$!
trap 'kill "$gitlab_pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do [ -s "$SWEEP/gitlab.env" ] && break; sleep 0.1; done
[ -s "$SWEEP/gitlab.env" ] || { echo "bench: the GitLab stand-in did not start; see $SWEEP/gitlabstate.log" >&2; exit 1; }
# shellcheck source=/dev/null
source "$SWEEP/gitlab.env"
export CI_PROJECT_PATH_SLUG="$sweep_project_slug"

# --- seeding --------------------------------------------------------------------------------------

# The template: an environment and a release as the provider leaves them.
template_env=sweep-template
template_dir="$SWEEP/template"
remove_environment "$template_env"
write_release_config "$template_dir" "$template_env" 3 false
log "sweep: applying the template environment with the provider"
tf "$template_dir" apply -auto-approve -input=false >"$SWEEP/template-apply.log" 2>&1 ||
  { tail -n 30 "$SWEEP/template-apply.log" >&2; exit 1; }
template_ns="$(tf "$template_dir" output -raw namespace)"

# What each copy holds: the namespace's name, labels and annotations, and every object of the
# release's (its ConfigMaps and Helm's record), without what the API server sets.
kubectl get namespace "$template_ns" -o json |
  jq '{apiVersion, kind, metadata: {name: .metadata.name, labels: .metadata.labels, annotations: .metadata.annotations}}' \
    >"$SWEEP/namespace.json"
kubectl -n "$template_ns" get configmaps,secrets -l 'owner=helm' -o json >"$SWEEP/record.json"
kubectl -n "$template_ns" get configmaps -l app.kubernetes.io/managed-by=Helm -o json >"$SWEEP/objects.json"
jq -e '.items | length == 1' "$SWEEP/record.json" >/dev/null ||
  { echo "bench: the template release has no single Helm record in $template_ns" >&2; exit 1; }
jq -e '.items | length >= 1' "$SWEEP/objects.json" >/dev/null ||
  { echo "bench: the template release applied no ConfigMap in $template_ns" >&2; exit 1; }
record_release="$(jq -r '.items[0].data.release' "$SWEEP/record.json" | base64 -d | base64 -d | gunzip)"

# copy ENVIRONMENT prints the namespace and the release's objects of ENVIRONMENT, as JSON lines.
copy() {
  local env="$1" ns="${template_ns/$template_env/$1}" release
  release="$(jq -c --arg ns "$ns" '.namespace = $ns' <<<"$record_release" | gzip -c | base64 -w0 | base64 -w0)"
  jq -c --arg from "$template_env" --arg to "$env" \
    'walk(if type == "string" then gsub($from; $to) else . end)' "$SWEEP/namespace.json"
  jq -c --arg ns "$ns" --arg release "$release" \
    '.items[] | {apiVersion, kind, type, metadata: {name: .metadata.name, namespace: $ns, labels: .metadata.labels,
      annotations: .metadata.annotations}, data: (.data | .release = $release)}' "$SWEEP/record.json"
  jq -c --arg ns "$ns" \
    '.items[] | {apiVersion, kind, metadata: {name: .metadata.name, namespace: $ns, labels: .metadata.labels,
      annotations: .metadata.annotations}, data}' "$SWEEP/objects.json"
}

# uids_of ENVIRONMENT... prints "namespace uid" of each environment's namespace that exists.
uids_of() {
  local env
  for env in "$@"; do echo "${template_ns/$template_env/$env}"; done >"$SWEEP/names"
  kubectl get namespaces -o go-template='{{range .items}}{{.metadata.name}} {{.metadata.uid}}{{"\n"}}{{end}}' |
    awk 'NR == FNR { want[$1] = 1; next } ($1 in want)' "$SWEEP/names" - | sort
}
log "sweep: seeding $BENCH_SWEEP_NAMESPACES leftover and $BENCH_SWEEP_LIVE live namespaces, each with a release"
leftovers=()
for i in $(seq -f '%04g' 1 "$BENCH_SWEEP_NAMESPACES"); do leftovers+=("left-$i"); done
lives=()
for i in $(seq -f '%04g' 1 "$BENCH_SWEEP_LIVE"); do lives+=("live-$i"); done
# An earlier, interrupted run's namespaces go first.
mapfile -t earlier < <(uids_of "${leftovers[@]}" "${lives[@]}" | cut -d' ' -f1)
if [ "${#earlier[@]}" -gt 0 ]; then
  log "sweep: removing ${#earlier[@]} namespaces an earlier run left"
  kubectl delete namespace "${earlier[@]}" --wait=true --timeout=15m >/dev/null
fi
seed_start="$EPOCHREALTIME"
for env in "${leftovers[@]}" "${lives[@]}"; do copy "$env"; done |
  jq -s '{apiVersion: "v1", kind: "List", items: (map(select(.kind == "Namespace")) + map(select(.kind != "Namespace")))}' \
    >"$SWEEP/seed.json"
kubectl create -f "$SWEEP/seed.json" >"$SWEEP/seed.log" 2>&1 || { tail -n 30 "$SWEEP/seed.log" >&2; exit 1; }
seed_seconds="$(awk -v s="$seed_start" -v e="$EPOCHREALTIME" 'BEGIN { printf "%.1f", e - s }')"
log "sweep: seeded in $seed_seconds s; removing the template"
tf "$template_dir" destroy -auto-approve -input=false >"$SWEEP/template-destroy.log" 2>&1 ||
  { tail -n 30 "$SWEEP/template-destroy.log" >&2; exit 1; }

uids_of "${lives[@]}" >"$SWEEP/live-before"
[ "$(wc -l <"$SWEEP/live-before")" = "$BENCH_SWEEP_LIVE" ] || { echo "bench: not every live namespace was seeded" >&2; exit 1; }
[ "$(uids_of "${leftovers[@]}" | wc -l)" = "$BENCH_SWEEP_NAMESPACES" ] || { echo "bench: not every leftover was seeded" >&2; exit 1; }

# --- the janitor, as its job runs it --------------------------------------------------------------

janitor="$SWEEP/janitor"
mkdir -p "$janitor"
cp "$REPO_ROOT"/examples/janitor/*.tf "$janitor/"
tf_init "$janitor"
export TF_VAR_kube_context="$KUBE_CONTEXT" TF_VAR_min_age_hours=0

# api_requests prints the count of requests the API server answered, from apiserver_request_total.
api_requests() {
  kubectl get --raw /metrics | awk '/^apiserver_request_total\{/ { total += $NF } END { printf "%d\n", total }'
}

# audit_lines prints how many lines the audit log holds (0 without one).
audit_lines() { if [ -f "$AUDIT_LOG" ]; then wc -l <"$AUDIT_LOG"; else echo 0; fi; }

# janitor_step NAME COMMAND... runs one step of the job and records its time and requests.
janitor_step() {
  local name="$1" start status=0 before_requests before_audit
  shift
  before_requests="$(api_requests)"
  before_audit="$(audit_lines)"
  start="$EPOCHREALTIME"
  # -no-color before the arguments: apply's plan file must come last.
  "$TERRAFORM" -chdir="$janitor" "$1" -no-color "${@:2}" >"$SWEEP/janitor-$name.log" 2>&1 || status=$?
  local seconds
  seconds="$(awk -v s="$start" -v e="$EPOCHREALTIME" 'BEGIN { printf "%.1f", e - s }')"
  if [ "$status" != 0 ]; then
    log "bench: the janitor's $name exited $status; last lines of $SWEEP/janitor-$name.log:"
    tail -n 30 "$SWEEP/janitor-$name.log" >&2
    exit 1
  fi
  sleep 2 # the audit log is written in batches
  local provider_requests="not counted" by_verb=""
  if [ -f "$AUDIT_LOG" ]; then
    tail -n +"$((before_audit + 1))" "$AUDIT_LOG" |
      jq -r 'select((.userAgent // "") | startswith("terraform-provider-gitlabk8s")) | .verb' | sort | uniq -c |
      awk '{ printf "%s %s\n", $2, $1 }' >"$SWEEP/janitor-$name.verbs"
    provider_requests="$(awk '{ n += $2 } END { print n + 0 }' "$SWEEP/janitor-$name.verbs")"
    by_verb="$(awk '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $1, $2 }' "$SWEEP/janitor-$name.verbs")"
  fi
  echo "$name|$seconds|$provider_requests|$by_verb|$(($(api_requests) - before_requests))" >>"$SWEEP/steps"
  log "  janitor $name: $seconds s, provider requests: $provider_requests ($by_verb)"
}

: >"$SWEEP/steps"
log "sweep: running the janitor (-parallelism=$BENCH_SWEEP_PARALLELISM)"
janitor_start="$EPOCHREALTIME"
janitor_step plan plan -input=false -parallelism="$BENCH_SWEEP_PARALLELISM" -out=adopt.tfplan
janitor_step apply apply -input=false -parallelism="$BENCH_SWEEP_PARALLELISM" adopt.tfplan
janitor_step destroy destroy -input=false -auto-approve -parallelism="$BENCH_SWEEP_PARALLELISM"
janitor_seconds="$(awk -v s="$janitor_start" -v e="$EPOCHREALTIME" 'BEGIN { printf "%.1f", e - s }')"
adopted="$(grep -c 'gitlabk8s_environment.leftover\[.*: Destruction complete' "$SWEEP/janitor-destroy.log" || true)"

# --- what must hold -------------------------------------------------------------------------------

left="$(uids_of "${leftovers[@]}" | wc -l)"
[ "$left" = 0 ] || { echo "bench: $left of the $BENCH_SWEEP_NAMESPACES leftovers are still there after the janitor" >&2; exit 1; }
[ "$adopted" = "$BENCH_SWEEP_NAMESPACES" ] ||
  { echo "bench: the janitor destroyed $adopted environments, expected $BENCH_SWEEP_NAMESPACES" >&2; exit 1; }
uids_of "${lives[@]}" >"$SWEEP/live-after"
if ! diff -u "$SWEEP/live-before" "$SWEEP/live-after" >"$SWEEP/live.diff"; then
  echo "bench: the janitor changed live namespaces (name, UID before and after):" >&2
  cat "$SWEEP/live.diff" >&2
  exit 1
fi
log "sweep: the $BENCH_SWEEP_NAMESPACES leftovers are gone and the $BENCH_SWEEP_LIVE live namespaces kept their UIDs; removing those"
for env in "${lives[@]}"; do kubectl delete namespace "${template_ns/$template_env/$env}" --wait=false >/dev/null; done

section="$SWEEP/section.md"
{
  echo "## Sweeping at seed scale: $BENCH_SWEEP_NAMESPACES leftover namespaces and $BENCH_SWEEP_LIVE live ones"
  echo
  echo "Written by \`BENCH_MODE=sweep make bench\` (\`scripts/bench/sweep.sh\`) on $(date -u +%FT%TZ) at commit $(git rev-parse --short HEAD)," \
    "on $(nproc) cores with the load average (1, 5, 15 min) at $(cut -d' ' -f1-3 /proc/loadavg) at the end of the run" \
    "(it was $(sed -n 's/^load_start=//p' "$META") at its start). Every figure comes from that one run."
  echo
  echo "$BENCH_SWEEP_NAMESPACES namespaces of environments GitLab no longer lists, each holding a release of three ConfigMaps," \
    "and $BENCH_SWEEP_LIVE of environments GitLab lists as available, all marked as the provider marks them" \
    "(copied from an environment and release the provider applied, Helm's record included; seeded in $seed_seconds s)." \
    "The janitor example (\`examples/janitor\`) ran as its job runs it, with \`-parallelism=$BENCH_SWEEP_PARALLELISM\`" \
    "(\`SWEEP_PARALLELISM\`) and \`min_age_hours = 0\`, in $janitor_seconds s:" \
    "it destroyed all $BENCH_SWEEP_NAMESPACES leftovers, none of them is left, and the $BENCH_SWEEP_LIVE live namespaces kept their UIDs."
  echo
  echo "| step | seconds | provider's requests | by verb | every client's requests |"
  echo "|---|---:|---:|---|---:|"
  awk -F'|' '{ printf "| `terraform %s` | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5 }' "$SWEEP/steps"
  echo
  echo "The provider's requests are those of its user agent in the API server's audit log (\`GITLABK8S_AUDIT_LOG=1\`" \
    "of \`scripts/cluster-up.sh\`); every client's are the change of \`apiserver_request_total\`, which counts the namespace" \
    "controller's deletion of each namespace's objects too. A destroy waits until each namespace is gone."
} >"$section"
go run ./scripts/bench/report -section sweep -section-file "$section" -out "$BENCH_OUT"
log "wrote the section \"sweep\" of $BENCH_OUT (logs in $SWEEP)"
