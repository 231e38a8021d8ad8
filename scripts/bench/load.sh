# shellcheck shell=bash
# BENCH_MODE=load of scripts/bench.sh, which sources this file once the provider is built and
# installed into the mirror, with its helpers (log, kubectl, tf, write_release_config,
# remove_environment) defined.
#
# BENCH_LOAD_ENVS environments (default 20), each with one release of BENCH_LOAD_OBJECTS objects
# of scripts/bench/chart (default 20), applied by as many terraform processes at once against the
# one API server, after one such environment applied alone. Then a no-change plan of each (which
# must say no change) and the destroy of all, alone and at once alike. Every command must succeed,
# or the run fails. The API server's request counters (apiserver_request_total, and API Priority
# and Fairness' rejections) are read around the commands run at once. Writes the section "load" of
# $BENCH_OUT (scripts/bench/report -section), leaving the rest of it as it is.

BENCH_LOAD_ENVS="${BENCH_LOAD_ENVS:-20}"
BENCH_LOAD_OBJECTS="${BENCH_LOAD_OBJECTS:-20}"

# One copy of the provider for every configuration, as a runner's cache would hold it.
export TF_PLUGIN_CACHE_DIR="$WORK/plugin-cache"
mkdir -p "$TF_PLUGIN_CACHE_DIR" "$WORK/load"

# api_counters prints the API server's request counters: every request answered, those answered
# 429, and those API Priority and Fairness rejected (429 too, and counted by reason).
api_counters() {
  kubectl get --raw /metrics | awk '
    /^apiserver_request_total\{/ { total += $NF; if ($0 ~ /code="429"/) throttled += $NF }
    /^apiserver_flowcontrol_rejected_requests_total\{/ { rejected += $NF }
    END { printf "%d %d %d\n", total, throttled, rejected }'
}

# timed OUT LOG COMMAND... runs COMMAND with its output in LOG and writes "seconds exit-status" to
# OUT.
timed() {
  local out="$1" logf="$2" start status=0
  shift 2
  start="$EPOCHREALTIME"
  "$@" >"$logf" 2>&1 || status=$?
  awk -v s="$start" -v e="$EPOCHREALTIME" -v st="$status" 'BEGIN { printf "%.3f %d\n", e - s, st }' >"$out"
}

# expect_status OP EXPECTED FILES... fails the run when a command of OP exited otherwise than
# EXPECTED, with the end of its log.
expect_status() {
  local op="$1" want="$2" f failed=0
  shift 2
  for f in "$@"; do
    if [ "$(cut -d' ' -f2 "$f")" != "$want" ]; then
      log "bench: $op of ${f%.time} exited $(cut -d' ' -f2 "$f"), expected $want; last lines of ${f%.time}.log:"
      tail -n 30 "${f%.time}.log" >&2
      failed=1
    fi
  done
  [ "$failed" = 0 ] || exit 1
}

# at_once OP ARGS... runs `terraform OP ARGS...` in every environment's configuration at the same
# time and waits for all of them, recording the API server's counters before and after.
at_once() {
  local op="$1" i pids=()
  shift
  api_counters >"$WORK/load/$op-counters-before"
  for i in $(seq 1 "$BENCH_LOAD_ENVS"); do
    timed "$WORK/load/$op-$i.time" "$WORK/load/$op-$i.log" tf "$WORK/tf-load-$i" "$op" "$@" &
    pids+=("$!")
  done
  wait "${pids[@]}"
  api_counters >"$WORK/load/$op-counters-after"
}

log "load: $BENCH_LOAD_ENVS environments of $BENCH_LOAD_OBJECTS objects each; writing their configurations"
for i in alone $(seq 1 "$BENCH_LOAD_ENVS"); do
  remove_environment "bench/load-$i"
  write_release_config "$WORK/tf-load-$i" "bench/load-$i" "$BENCH_LOAD_OBJECTS" false
done

log "load: one environment alone"
for op in apply plan destroy; do
  case "$op" in
    apply | destroy) args=(-auto-approve -input=false) want=0 ;;
    plan) args=(-input=false -detailed-exitcode) want=0 ;;
  esac
  timed "$WORK/load/$op-alone.time" "$WORK/load/$op-alone.log" tf "$WORK/tf-load-alone" "$op" "${args[@]}"
  expect_status "$op alone" "$want" "$WORK/load/$op-alone.time"
  log "  $op alone: $(cut -d' ' -f1 "$WORK/load/$op-alone.time") s"
done

for op in apply plan destroy; do
  log "load: $op of $BENCH_LOAD_ENVS environments at once"
  case "$op" in
    apply | destroy) at_once "$op" -auto-approve -input=false ;;
    plan) at_once "$op" -input=false -detailed-exitcode ;;
  esac
  expect_status "$op at once" 0 "$WORK/load/$op"-[0-9]*.time
done

# load_row OP LABEL prints the table row of OP: alone, the median and the slowest at once, and
# the slowest against alone.
load_row() {
  local op="$1" label="$2" alone
  alone="$(cut -d' ' -f1 "$WORK/load/$op-alone.time")"
  cut -d' ' -f1 "$WORK/load/$op"-[0-9]*.time | sort -g | awk -v alone="$alone" -v label="$label" '
    { t[NR] = $1 }
    END {
      median = (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
      printf "| %s | %.2f | %.2f | %.2f | %.1fx | %.1fx |\n", label, alone, median, t[NR], median / alone, t[NR] / alone
    }'
}

# counters_row OP LABEL prints the API server's requests during OP at once.
counters_row() {
  local op="$1" label="$2"
  paste -d' ' "$WORK/load/$op-counters-before" "$WORK/load/$op-counters-after" |
    awk -v label="$label" '{ printf "| %s | %d | %d | %d |\n", label, $4 - $1, $5 - $2, $6 - $3 }'
}

section="$WORK/load/section.md"
{
  echo "## Load: $BENCH_LOAD_ENVS environments applied at once"
  echo
  echo "Written by \`BENCH_MODE=load make bench\` (\`scripts/bench/load.sh\`) on $(date -u +%FT%TZ) at commit $(git rev-parse --short HEAD)," \
    "on $(nproc) cores with the load average (1, 5, 15 min) at $(cut -d' ' -f1-3 /proc/loadavg) at the end of the run" \
    "(it was $(sed -n 's/^load_start=//p' "$META") at its start). Every figure comes from that one run."
  echo
  echo "$BENCH_LOAD_ENVS environments, each with one release of $BENCH_LOAD_OBJECTS objects of \`scripts/bench/chart\`," \
    "each in a configuration and state of its own, as $BENCH_LOAD_ENVS pipelines would hold them: first one of them alone," \
    "then $BENCH_LOAD_ENVS \`terraform\` processes started at once for each command, against the one local API server," \
    "which shares the machine's cores with them. Every command succeeded (the run fails otherwise), and every plan after" \
    "the applies said no change (\`-detailed-exitcode\`). Wall-clock seconds of each command, process start included."
  echo
  echo "| command | alone (s) | at once: median (s) | at once: slowest (s) | median/alone | slowest/alone |"
  echo "|---|---:|---:|---:|---:|---:|"
  load_row apply "\`terraform apply\`, install (environment and release)"
  load_row plan "\`terraform plan\`, no change"
  load_row destroy "\`terraform destroy\` (release and environment)"
  echo
  echo "Requests the API server answered while the commands ran at once (every client's, the controllers' included)," \
    "those it answered 429 (Too Many Requests) and those of them API Priority and Fairness rejected:"
  echo
  echo "| commands at once | requests | answered 429 | rejected by API Priority and Fairness |"
  echo "|---|---:|---:|---:|"
  counters_row apply "\`terraform apply\`"
  counters_row plan "\`terraform plan\`"
  counters_row destroy "\`terraform destroy\`"
} >"$section"
go run ./scripts/bench/report -section load -section-file "$section" -out "$BENCH_OUT"
log "wrote the section \"load\" of $BENCH_OUT (logs in $WORK/load)"
