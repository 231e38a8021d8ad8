// Command report turns the raw results of scripts/bench.sh into BENCHMARKS.md: medians per chart
// size, the provider's peak memory, failure detection, each of issue 7's targets with PASS or
// MISS, and CPU profiles when the run took them.
//
//	go run ./scripts/bench/report -results results.tsv -meta meta.txt -out BENCHMARKS.md
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	resultsPath := flag.String("results", "", "tab-separated results written by scripts/bench.sh")
	metaPath := flag.String("meta", "", "key=value lines describing the machine, versions and settings")
	profilesDir := flag.String("profiles", "", "folder of <operation>.top files from go tool pprof -top (optional)")
	notesPath := flag.String("notes", "", "markdown appended to the report as findings (optional)")
	outPath := flag.String("out", "BENCHMARKS.md", "report to write")
	compare := flag.String("compare", "", "label=results.tsv,... : print the medians of these runs side by side as markdown instead")
	section := flag.String("section", "", "replace (or add) only this marked section of -out with -section-file, and keep the rest")
	sectionFile := flag.String("section-file", "", "markdown of the section -section names")
	flag.Parse()

	if *section != "" {
		if err := writeSection(*outPath, *section, *sectionFile); err != nil {
			log.Fatal(err.Error())
		}
		return
	}

	if *compare != "" {
		if err := compareRuns(os.Stdout, *compare); err != nil {
			log.Fatal(err.Error())
		}
		return
	}

	if err := run(*resultsPath, *metaPath, *profilesDir, *notesPath, *outPath); err != nil {
		log.Fatal(err.Error())
	}
}

func run(resultsPath, metaPath, profilesDir, notesPath, outPath string) error {
	f, err := os.Open(resultsPath)
	if err != nil {
		return fmt.Errorf("open results: %w", err)
	}
	defer f.Close()
	res, err := parseResults(f)
	if err != nil {
		return err
	}
	meta, err := readMeta(metaPath)
	if err != nil {
		return err
	}
	profiles, err := readProfiles(profilesDir)
	if err != nil {
		return err
	}
	var notes []byte
	if notesPath != "" {
		notes, err = os.ReadFile(notesPath)
		if err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("read notes: %w", err)
		}
	}
	kept, err := keptSections(outPath)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	writeReport(&buf, res, meta, profiles, notes)
	if kept != "" {
		buf.WriteString("\n" + kept)
	}
	if err := os.WriteFile(outPath, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// meta keeps the key=value lines in the order they came.
type meta struct {
	keys   []string
	values map[string]string
}

func (m meta) get(key string) string {
	if v, ok := m.values[key]; ok && v != "" {
		return v
	}
	return "unknown"
}

func readMeta(path string) (meta, error) {
	m := meta{values: map[string]string{}}
	if path == "" {
		return m, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return m, fmt.Errorf("open meta: %w", err)
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		key, value, ok := strings.Cut(scanner.Text(), "=")
		if !ok {
			continue
		}
		if _, seen := m.values[key]; !seen {
			m.keys = append(m.keys, key)
		}
		m.values[key] = value
	}
	if err := scanner.Err(); err != nil {
		return m, fmt.Errorf("read meta: %w", err)
	}
	return m, nil
}

// readProfiles returns the pprof -top output of each operation, by operation name.
func readProfiles(dir string) (map[string]string, error) {
	out := map[string]string{}
	if dir == "" {
		return out, nil
	}
	paths, err := filepath.Glob(filepath.Join(dir, "*.top"))
	if err != nil {
		return nil, fmt.Errorf("list profiles: %w", err)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("read profile: %w", err)
		}
		if text := strings.TrimSpace(string(b)); text != "" {
			out[strings.TrimSuffix(filepath.Base(p), ".top")] = text
		}
	}
	return out, nil
}

// metricRow names a metric in the timing tables.
type metricRow struct{ metric, label string }

var terraformRows = []metricRow{
	{"plan_empty", "`terraform plan`, empty configuration (the floor)"},
	{"plan_provider_only", "`terraform plan`, provider configured, no resources"},
	{"plan_minimal_nochange", "`terraform plan`, a provider that does nothing, one object, no change"},
	{"plan_minimal_change", "`terraform plan`, a provider that does nothing, one object, one changed value"},
	{"plan_nochange", "`terraform plan`, no change"},
	{"plan_change", "`terraform plan`, one changed value"},
	{"plan_change_offline", "`terraform plan`, one changed value, `plan_checks = \"offline\"` (shipped schema, no cluster schemas, no dry run)"},
	{"plan_change_nochecks", "`terraform plan`, one changed value, `plan_checks = \"none\"` (no schema, API version or dry-run checks)"},
	{"apply_install", "`terraform apply`, install (environment and release)"},
	{"apply_upgrade", "`terraform apply`, upgrade (one changed value)"},
	{"destroy", "`terraform destroy` (release and environment)"},
}

var helmRows = []metricRow{
	{"helm_template", "`helm template`"},
	{"helm_diff_nochange", "`helm template \\| kubectl diff --server-side`, no change"},
	{"helm_diff_change", "`helm template \\| kubectl diff --server-side`, one changed value"},
	{"helm_install", "`helm upgrade --install`, install"},
	{"helm_install_wait", "`helm upgrade --install --wait`, install"},
	{"helm_upgrade", "`helm upgrade --install`, one changed value"},
	{"helm_upgrade_wait", "`helm upgrade --install --wait`, one changed value"},
	{"namespace_delete", "`kubectl delete namespace --wait` (the namespace controller)"},
}

var memoryRows = []metricRow{
	{"plan_provider_only", "plan, no resources"},
	{"plan_nochange", "plan, no change"},
	{"plan_change", "plan, one changed value"},
	{"plan_change_offline", "plan, one changed value, offline checks"},
	{"plan_change_nochecks", "plan, one changed value, no checks"},
	{"apply_install", "apply, install"},
	{"apply_upgrade", "apply, upgrade"},
	{"destroy", "destroy"},
}

func writeReport(w *bytes.Buffer, res *results, m meta, profiles map[string]string, notes []byte) {
	sizes := res.tableSizes()
	fmt.Fprintln(w, "# Benchmarks")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Written by `make bench` (`scripts/bench.sh`) on %s at commit %s. Every figure below comes from that one run, on one machine, against the local cluster (`scripts/cluster-up.sh`), which runs on the same cores as the commands it serves. Rerun it to compare: figures from different machines or runs are not comparable.\n", m.get("date"), m.get("commit"))
	fmt.Fprintln(w)

	fmt.Fprintln(w, "## Machine and versions")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| | |")
	fmt.Fprintln(w, "|---|---|")
	for _, kv := range [][2]string{
		{"CPU", m.get("cpu")}, {"cores", m.get("cores")}, {"memory", m.get("memory")}, {"kernel", m.get("kernel")},
		{"load average (1, 5, 15 min) at the start and at the end of the run", m.get("load_start") + "; " + m.get("load")},
		{"provider binary", m.get("provider_build")},
		{"Go", m.get("go")}, {"Terraform", m.get("terraform")}, {"helm", m.get("helm")},
		{"kubectl", m.get("kubectl")}, {"Kubernetes API server", m.get("server") + " (etcd, kube-apiserver, controller-manager, scheduler on loopback; kwok " + m.get("kwok") + " plays the node)"},
	} {
		fmt.Fprintf(w, "| %s | %s |\n", kv[0], kv[1])
	}
	fmt.Fprintln(w)

	fmt.Fprintln(w, "## How it was measured")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "- Charts: `scripts/bench/chart`, rendering %s objects (in every ten: five ConfigMaps, a Secret, a Service, a ServiceAccount, a Deployment of one pod, a PodDisruptionBudget). The \"one changed value\" is `revision`, which only the first ConfigMap carries.\n", strings.Join(strings.Fields(m.get("sizes")), ", "))
	fmt.Fprintf(w, "- Runs: %s per size, %s for 1000 objects and more; each figure is the median, with the fastest and slowest run in brackets. Wall-clock time of the whole command, process start included.\n", m.get("runs"), m.get("runs_large"))
	fmt.Fprintln(w, "- Each run, per size, with Terraform: `terraform apply` (install), `terraform plan` of the empty and the provider-only configurations, `terraform plan` with no change (`-detailed-exitcode` must say no change), `terraform plan -var revision=2` (must say changes), `terraform apply -var revision=2` (upgrade), `terraform destroy`. Then with Helm, in a namespace of its own, in the same order: `helm template`, `helm upgrade --install --wait` (install), `helm template | kubectl diff --server-side --force-conflicts -f -` with no change and with one change, `helm upgrade --install --wait` (one change), `helm upgrade --install` (one more change, no wait), `kubectl delete namespace --wait`; then `helm upgrade --install` (install, no wait) into a fresh namespace.")
	fmt.Fprintln(w, "- kubectl and helm start every command with an empty discovery cache (`KUBECACHEDIR`), as in a CI job's fresh container; the provider with an empty cache folder (`GITLABK8S_CACHE_DIR`), which only the processes of the same command share.")
	fmt.Fprintln(w, "- Terraform installs the provider from a filesystem mirror (`terraform init`), as from a registry; it starts the provider process itself for each command. The package is laid out as released: on Linux the front Terraform starts (`scripts/bench/front`) and the engine the provider processes of one command share (`scripts/bench/provider`), each built with the flags of the shipped build (`-trimpath -s -w`): the provider's own `main`s plus a peak-RSS record on exit (`getrusage`) and an optional CPU profile of the engine, both switched by environment variables. A baseline without a front is installed as the provider alone.")
	fmt.Fprintln(w, "- \"A provider that does nothing\": `scripts/bench/minimal`, a terraform-plugin-framework provider with one resource kept in the state alone (no network, no dependency beyond the framework), installed the same way. Its plans are the least any Terraform provider takes on this machine: the process starts and gRPC calls Terraform makes for every provider, whatever it manages.")
	fmt.Fprintln(w, "- Every command talks to the cluster as its `admin` context. The helm CLI is built from source at the pinned version (`scripts/build-helm.sh`); the helm-diff plugin is not available here, so its equivalent is the pipe above.")
	fmt.Fprintf(w, "- Failure detection: a 10-object release whose first Deployment's pods crash-loop (kwok stage `gitlabk8s.test/fail: CrashLoopBackOff`). The provider: time from `terraform apply` start to its exit with an error naming `CrashLoopBackOff`, %s runs. Helm: `helm upgrade --install --wait --timeout %s` on the same chart, once, in the background of the rest of the run.\n", m.get("failure_runs"), m.get("helm_timeout"))
	fmt.Fprintln(w)

	fmt.Fprintln(w, "## Targets")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| target | measured | result |")
	fmt.Fprintln(w, "|---|---|---|")
	for _, t := range append(evaluateTargets(res), evaluateSpeedTargets(res)...) {
		measured := t.measured
		if measured == "" {
			measured = "—"
		}
		fmt.Fprintf(w, "| %s | %s | **%s** |\n", t.target, measured, t.verdict)
	}
	fmt.Fprintln(w)

	plan, providerOnly := res.stat(floorRatioSize, "plan_nochange"), res.stat(floorRatioSize, "plan_provider_only")
	if plan.hasSamples && providerOnly.hasSamples && providerOnly.median > 0 {
		fmt.Fprintf(w, "For reference: the no-change plan of %d objects takes %.2fx the plan of a configuration that configures the provider and manages nothing (%.2f s vs %.2f s), the floor of any configuration using this provider.\n\n",
			floorRatioSize, plan.median/providerOnly.median, plan.median, providerOnly.median)
	}

	writeBeforeAfter(w, res, m)

	fmt.Fprintln(w, "## Terraform and the provider (seconds, median [fastest–slowest])")
	fmt.Fprintln(w)
	writeTimingTable(w, res, sizes, terraformRows)
	fmt.Fprintln(w, "## Helm and kubectl on the same objects (seconds, median [fastest–slowest])")
	fmt.Fprintln(w)
	writeTimingTable(w, res, sizes, helmRows)
	writeTunnelTable(w, res, m, sizes)

	fmt.Fprintln(w, "## Provider peak memory (MiB of resident memory, median [largest])")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "The largest peak among the provider processes one command started (Terraform starts the provider more than once per command; see the next table).")
	fmt.Fprintln(w)
	writeHeader(w, "operation", sizes)
	for _, row := range memoryRows {
		cells := make([]string, 0, len(sizes))
		for _, size := range sizes {
			st := res.stat(size, row.metric)
			if !st.hasRSS {
				cells = append(cells, "—")
				continue
			}
			cells = append(cells, fmt.Sprintf("%.0f [%.0f]", st.rssMedian/1024, st.rssPeak/1024))
		}
		fmt.Fprintf(w, "| %s | %s |\n", row.label, strings.Join(cells, " | "))
	}
	fmt.Fprintln(w)

	fmt.Fprintln(w, "## Provider processes per command and their CPU time (median)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Each cell: the provider's processes of one command (Terraform's starts of the provider; with a front, also the engine they share) · the CPU seconds (user and system, package initialization included) those processes used together.")
	fmt.Fprintln(w)
	writeHeader(w, "operation", sizes)
	for _, row := range memoryRows {
		cells := make([]string, 0, len(sizes))
		for _, size := range sizes {
			st := res.stat(size, row.metric)
			if !st.hasRSS {
				cells = append(cells, "—")
				continue
			}
			cells = append(cells, fmt.Sprintf("%.0f · %.2f s", st.processesMedian, st.cpuMedian))
		}
		fmt.Fprintf(w, "| %s | %s |\n", row.label, strings.Join(cells, " | "))
	}
	fmt.Fprintln(w)

	fmt.Fprintln(w, "## Failure detection (crash-looping Deployment)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| command | runs | seconds to the reported failure, median [fastest–slowest] |")
	fmt.Fprintln(w, "|---|---|---|")
	for _, row := range []metricRow{
		{"provider_failure", "`terraform apply`"},
		{"helm_failure", fmt.Sprintf("`helm upgrade --install --wait --timeout %s`", m.get("helm_timeout"))},
	} {
		st := res.stat(failureDetectionSize, row.metric)
		if !st.hasSamples {
			fmt.Fprintf(w, "| %s | 0 | not measured |\n", row.label)
			continue
		}
		fmt.Fprintf(w, "| %s | %d | %s |\n", row.label, st.n, formatStat(st))
	}
	fmt.Fprintln(w)

	writeFailureClasses(w, res, m)

	if text := strings.TrimSpace(string(notes)); text != "" {
		fmt.Fprintln(w, text)
		fmt.Fprintln(w)
	}

	if len(profiles) > 0 && len(sizes) > 0 {
		fmt.Fprintln(w, "## CPU profiles of the provider")
		fmt.Fprintln(w)
		fmt.Fprintf(w, "One extra pass over the largest chart (%d objects) with `GITLABK8S_BENCH_CPUPROFILE_DIR` set; `go tool pprof -top` over every provider process the command started.\n", sizes[len(sizes)-1])
		fmt.Fprintln(w)
		ops := make([]string, 0, len(profiles))
		for op := range profiles {
			ops = append(ops, op)
		}
		sort.Strings(ops)
		for _, op := range ops {
			fmt.Fprintf(w, "### %s\n\n```\n%s\n```\n\n", op, profiles[op])
		}
	}

}

func writeHeader(w *bytes.Buffer, first string, sizes []int) {
	cols := make([]string, 0, len(sizes))
	seps := make([]string, 0, len(sizes))
	for _, size := range sizes {
		cols = append(cols, fmt.Sprintf("%d objects", size))
		seps = append(seps, "---:")
	}
	fmt.Fprintf(w, "| %s | %s |\n", first, strings.Join(cols, " | "))
	fmt.Fprintf(w, "|---|%s|\n", strings.Join(seps, "|"))
}

func writeTimingTable(w *bytes.Buffer, res *results, sizes []int, rows []metricRow) {
	writeHeader(w, "command", sizes)
	for _, row := range rows {
		cells := make([]string, 0, len(sizes))
		for _, size := range sizes {
			st := res.stat(size, row.metric)
			if !st.hasSamples {
				cells = append(cells, "—")
				continue
			}
			cells = append(cells, formatStat(st))
		}
		fmt.Fprintf(w, "| %s | %s |\n", row.label, strings.Join(cells, " | "))
	}
	fmt.Fprintln(w)
}

func formatStat(st stat) string {
	if st.n == 1 {
		return fmt.Sprintf("%.2f", st.median)
	}
	return fmt.Sprintf("%.2f [%.2f–%.2f]", st.median, st.min, st.max)
}

// failureClasses are the rows of the failure classes table: the bench's class name, what the
// chart does, and the reason the provider's error names.
var failureClasses = [][3]string{
	{"unschedulable", "a pod requesting more ephemeral storage than any node has (`blocked_timeout = \"10s\"`)", "Unschedulable"},
	{"claim_class", "a PersistentVolumeClaim of a StorageClass that does not exist", "ProvisioningFailed"},
	{"quota", "two replicas in a namespace whose ResourceQuota allows one pod", "FailedCreate: exceeded quota"},
	{"unready", "a container failing its readiness probe (`blocked_timeout = \"10s\"`)", "Unhealthy"},
	{"hook", "a pre-install hook Job whose pod fails", "BackoffLimitExceeded"},
	{"loadbalancer", "a LoadBalancer Service no controller gives an address (`blocked_timeout = \"10s\"`)", "LoadBalancerPending"},
}

// writeFailureClasses writes the seconds from apply start to the reported failure for each
// class of scripts/bench.sh, beside helm's.
func writeFailureClasses(w *bytes.Buffer, res *results, m meta) {
	fmt.Fprintln(w, "## Failure detection by class (`testdata/charts/rollout`)")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Seconds from the start of the command to its failure, median of %s runs for the provider (`terraform apply`, `timeout = \"5m\"`), one run of `helm upgrade --install --wait --wait-for-jobs --timeout %s` in the background.\n", m.get("class_runs"), m.get("helm_timeout"))
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| class | reason named | provider | helm |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, c := range failureClasses {
		cells := make([]string, 0, 2)
		for _, metric := range []string{"provider_" + c[0] + "_failure", "helm_" + c[0] + "_failure"} {
			st := res.stat(0, metric)
			if !st.hasSamples {
				cells = append(cells, "not measured")
				continue
			}
			cells = append(cells, formatStat(st))
		}
		fmt.Fprintf(w, "| %s | `%s` | %s | %s |\n", c[1], c[2], cells[0], cells[1])
	}
	fmt.Fprintln(w)
}
