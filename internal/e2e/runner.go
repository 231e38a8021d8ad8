package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"sigs.k8s.io/yaml"
)

// Project is the GitLab project jobs run for.
type Project struct {
	ID, Path  string
	ServerURL string
	// APIURL is $CI_API_V4_URL, e.g. "http://127.0.0.1:1234/api/v4".
	APIURL string
	// JobToken is $CI_JOB_TOKEN; it is masked in job logs.
	JobToken      string
	DefaultBranch string
	// UserLogin is $GITLAB_USER_LOGIN, the user the pipeline runs for.
	UserLogin string
}

// Runner runs pipelines with gitlab-ci-local, every job with its shell
// executor in a folder of its own.
type Runner struct {
	// Command is the gitlab-ci-local command ([FindGitLabCILocal]).
	Command string
	Project Project
	// Variables are the project's CI/CD variables (Settings > CI/CD); they
	// override the file's.
	Variables map[string]string
	// Masked values are replaced by [MASKED] in job logs, as GitLab masks
	// masked variables (gitlab-ci-local does not).
	Masked []string
	// Env is the executor's own environment (PATH, HOME, KUBECONFIG, ...),
	// below every CI/CD variable.
	Env map[string]string
	// WorkDir holds a folder per pipeline.
	WorkDir string

	ids atomic.Int64
}

// PipelineOptions describe what triggered a pipeline.
type PipelineOptions struct {
	// Source is $CI_PIPELINE_SOURCE: "merge_request_event", "push" or "schedule".
	Source string
	// Ref is the branch, e.g. "feature-x".
	Ref string
	// MergeRequestIID is set for merge request pipelines.
	MergeRequestIID string
	// Checkout is the folder holding the pipeline's commit, .gitlab-ci.yml
	// included. The pipeline commits a copy of it to a Git repository of its
	// own, so deleting it later models a deleted branch.
	Checkout string
}

// Pipeline is one pipeline: a Git repository holding its commit, and the
// gitlab-ci-local state (job folders, artifacts, logs) beside it, which its
// jobs share.
type Pipeline struct {
	runner *Runner
	opts   PipelineOptions
	dir    string
	// repo is the folder gitlab-ci-local runs in; after [Pipeline.DeleteBranch]
	// it holds .gitlab-ci.yml alone.
	repo string

	mu    sync.Mutex
	execs int
	// running is the job gitlab-ci-local runs now: one at a time per pipeline.
	running string
}

// NewPipeline prepares a pipeline; no job runs until asked.
func (r *Runner) NewPipeline(opts PipelineOptions) (*Pipeline, error) {
	dir := filepath.Join(r.WorkDir, fmt.Sprintf("pipeline-%d", r.ids.Add(1)))
	p := &Pipeline{runner: r, opts: opts, dir: dir, repo: filepath.Join(dir, "repo")}
	if err := os.MkdirAll(filepath.Join(dir, "home"), 0o755); err != nil {
		return nil, err
	}
	if err := copyTree(opts.Checkout, p.repo); err != nil {
		return nil, fmt.Errorf("check out the pipeline's commit: %w", err)
	}
	if err := p.commit(); err != nil {
		return nil, err
	}
	return p, nil
}

// commit makes p.repo a Git repository on the pipeline's branch whose one
// commit holds its files, with the project's remote: gitlab-ci-local reads the
// project path, the branch and the commit from it.
func (p *Pipeline) commit() error {
	remote := strings.TrimSuffix(p.runner.Project.ServerURL, "/") + "/" + p.runner.Project.Path + ".git"
	for _, args := range [][]string{
		{"init", "-q", "-b", p.opts.Ref},
		{"add", "-A"},
		{"-c", "user.name=e2e", "-c", "user.email=e2e@example.com", "commit", "-q", "-m", "commit"},
		{"remote", "add", "origin", remote},
		{"symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/" + p.runner.Project.DefaultBranch},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = p.repo
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %w\n%s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}

// DeleteBranch removes the pipeline's commit, as merging a merge request with
// "Delete source branch" does: jobs run later get no checkout, only the
// pipeline's configuration and the artifacts of the jobs they need.
func (p *Pipeline) DeleteBranch() error {
	ci, err := os.ReadFile(filepath.Join(p.repo, ".gitlab-ci.yml"))
	if err != nil {
		return err
	}
	if err := os.RemoveAll(p.repo); err != nil {
		return err
	}
	if err := os.MkdirAll(p.repo, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(p.repo, ".gitlab-ci.yml"), ci, 0o644); err != nil {
		return err
	}
	return p.commit()
}

// RunningJob is a started gitlab-ci-local run of one job, or of the whole
// pipeline.
type RunningJob struct {
	// Name is the job's name; empty for a whole pipeline.
	Name string

	pipeline  *Pipeline
	cmd       *exec.Cmd
	out       *SyncBuffer
	done      chan struct{}
	err       error
	startedAt time.Time
}

// JobResult is a finished job.
type JobResult struct {
	Name string
	// Dir is $CI_PROJECT_DIR, kept after the job for inspection.
	Dir string
	// Log is the job log with masked values replaced.
	Log string
	// Err is nil when the job succeeded.
	Err error
	// Duration is the gitlab-ci-local run's: for a job of a whole pipeline,
	// the pipeline's.
	Duration time.Duration
	// Report is the path of the job's terraform report in its folder, if any
	// (gitlab-ci-local leaves reports but dotenv where the job wrote them).
	Report string

	pipeline *Pipeline
}

// PipelineResult is a finished pipeline.
type PipelineResult struct {
	// Jobs are the jobs that ran, in the order they finished.
	Jobs []*JobResult
	// Output is gitlab-ci-local's output, masked.
	Output string
	// Err is nil when every job succeeded.
	Err error
}

// Job returns the named job's result, or nil when it did not run.
func (r *PipelineResult) Job(name string) *JobResult {
	for _, j := range r.Jobs {
		if j.Name == name {
			return j
		}
	}
	return nil
}

// Names are the names of the jobs that ran, sorted.
func (r *PipelineResult) Names() []string {
	var names []string
	for _, j := range r.Jobs {
		names = append(names, j.Name)
	}
	slices.Sort(names)
	return names
}

// Run runs the named job to its end. A failed job is reported in the
// result's Err, not as Run's error, which is for jobs that could not start.
func (p *Pipeline) Run(ctx context.Context, name string) (*JobResult, error) {
	job, err := p.Start(ctx, name)
	if err != nil {
		return nil, err
	}
	return job.Wait(), nil
}

// RunPipeline runs the pipeline as GitLab creates it: the jobs its workflow
// and rules select, in the order of their stages and needs, manual jobs left
// to be played.
func (p *Pipeline) RunPipeline(ctx context.Context) (*PipelineResult, error) {
	run, err := p.start(ctx, "")
	if err != nil {
		return nil, err
	}
	<-run.done
	res := &PipelineResult{Output: p.runner.mask(run.out.String()), Err: run.err}
	for _, m := range jobOutcome.FindAllStringSubmatch(plainLog(run.out.String()), -1) {
		job := p.result(m[2], time.Since(run.startedAt))
		if m[1] == "FAIL" {
			job.Err = fmt.Errorf("job %s failed", m[2])
		}
		res.Jobs = append(res.Jobs, job)
	}
	return res, nil
}

// ansiEscape matches color codes, which the CLIs write without a terminal too.
var ansiEscape = regexp.MustCompile(`\x1b\[[0-9;]*m`)

func plainLog(log string) string { return ansiEscape.ReplaceAllString(log, "") }

// jobOutcome is the line gitlab-ci-local ends a run with, per job.
var jobOutcome = regexp.MustCompile(`(?m)^\s*(PASS|FAIL|WARN)\s+(\S+)`)

// Start starts the named job and returns at once. A manual job runs as if
// played; the artifacts of the jobs it needs are those they left in this
// pipeline.
func (p *Pipeline) Start(ctx context.Context, name string) (*RunningJob, error) {
	return p.start(ctx, name)
}

func (p *Pipeline) start(ctx context.Context, name string, extra ...string) (*RunningJob, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running != "" {
		return nil, fmt.Errorf("pipeline runs %s already: one gitlab-ci-local at a time", p.running)
	}
	args := p.arguments()
	if name != "" {
		args = append(args, name)
	}
	args = append(args, extra...)
	cmd := exec.CommandContext(ctx, p.runner.Command, args...)
	cmd.Dir = p.repo
	cmd.Env = p.runner.environ()
	out := &SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group: a kill reaches the job's shell, the CLI and the provider plugin.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start gitlab-ci-local: %w", err)
	}
	p.running = cmp(name, "the pipeline")
	run := &RunningJob{Name: name, pipeline: p, cmd: cmd, out: out, done: make(chan struct{}), startedAt: time.Now()}
	go func() {
		defer close(run.done)
		run.err = cmd.Wait()
		p.mu.Lock()
		p.running = ""
		p.mu.Unlock()
	}()
	return run, nil
}

func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// arguments are gitlab-ci-local's options for every run of the pipeline.
func (p *Pipeline) arguments() []string {
	r, o := p.runner, p.opts
	args := []string{
		"--state-dir", "../state",
		"--home", filepath.Join(p.dir, "home"),
		"--force-shell-executor", "--shell-isolation",
		"--no-artifacts-to-source", "--no-color", "--max-job-name-padding", "0",
	}
	vars := map[string]string{
		"CI_PIPELINE_SOURCE": o.Source,
		"CI_SERVER_URL":      r.Project.ServerURL,
		"CI_API_V4_URL":      r.Project.APIURL,
		"CI_API_GRAPHQL_URL": strings.TrimSuffix(r.Project.APIURL, "/v4") + "/graphql",
		"CI_PROJECT_ID":      r.Project.ID,
		"CI_JOB_TOKEN":       r.Project.JobToken,
		// gitlab-ci-local gives a job with an `image` the container's CI_PROJECT_DIR
		// (/builds/...) even when it runs the job in a shell; the job's shell starts in
		// the job's own folder, so "." is that folder.
		"CI_PROJECT_DIR": ".",
	}
	if r.Project.UserLogin != "" {
		vars["GITLAB_USER_LOGIN"] = r.Project.UserLogin
	}
	if o.MergeRequestIID != "" {
		vars["CI_MERGE_REQUEST_IID"] = o.MergeRequestIID
		// GitLab sets no CI_COMMIT_BRANCH in merge request pipelines.
		args = append(args, "--unset-variable", "CI_COMMIT_BRANCH")
	}
	for k, v := range r.Variables {
		vars[k] = v
	}
	keys := make([]string, 0, len(vars))
	for k := range vars {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		args = append(args, "--variable", k+"="+vars[k])
	}
	return args
}

// predefinedOverrides are the predefined variables the pipeline sets for
// gitlab-ci-local, which warns about each unless told they are meant.
var predefinedOverrides = []string{"CI_PIPELINE_SOURCE", "CI_SERVER_URL", "CI_API_V4_URL", "CI_API_GRAPHQL_URL", "CI_PROJECT_ID", "CI_PROJECT_DIR", "CI_JOB_TOKEN", "GITLAB_USER_LOGIN", "CI_MERGE_REQUEST_IID"}

// environ is gitlab-ci-local's environment, which its shell jobs inherit:
// the executor's, without gitlab-ci-local's own GCL_ options but one.
func (r *Runner) environ() []string {
	env := make([]string, 0, len(r.Env)+1)
	for k, v := range r.Env {
		if !strings.HasPrefix(k, "GCL_") {
			env = append(env, k+"="+v)
		}
	}
	env = append(env, "GCL_IGNORE_PREDEFINED_VARS="+strings.Join(predefinedOverrides, ","))
	slices.Sort(env)
	return env
}

// Kill sends SIGKILL to the run's whole process group, as a runner whose
// machine disappears would leave it: no cleanup, no unlock.
func (j *RunningJob) Kill() error {
	err := syscall.Kill(-j.cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// Done is closed when the run has ended.
func (j *RunningJob) Done() <-chan struct{} { return j.done }

// Log returns gitlab-ci-local's output so far, masked.
func (j *RunningJob) Log() string { return j.pipeline.runner.mask(j.out.String()) }

// Wait waits for the job to end.
func (j *RunningJob) Wait() *JobResult {
	<-j.done
	res := j.pipeline.result(j.Name, time.Since(j.startedAt))
	res.Err = j.err
	if j.err != nil {
		res.Log += "\n" + j.Log()
	}
	return res
}

// result reads what a finished job left: its log and folder.
func (p *Pipeline) result(name string, d time.Duration) *JobResult {
	state := filepath.Join(p.dir, "state")
	log, _ := os.ReadFile(filepath.Join(state, "output", name+".log"))
	res := &JobResult{Name: name, Dir: filepath.Join(state, "builds", name), Log: p.runner.mask(string(log)), Duration: d, pipeline: p}
	if report, err := p.terraformReport(name, res.Dir); err == nil {
		res.Report = report
	}
	return res
}

// terraformReport is where the job wrote its artifacts:reports:terraform, as
// the runner would upload it: the path from the resolved configuration,
// relative to the project folder.
func (p *Pipeline) terraformReport(name, dir string) (string, error) {
	job, global, err := p.Preview(name)
	if err != nil {
		return "", err
	}
	artifacts, _ := job["artifacts"].(map[string]any)
	reports, _ := artifacts["reports"].(map[string]any)
	path, _ := reports["terraform"].(string)
	if path == "" {
		return "", fs.ErrNotExist
	}
	vars := map[string]string{"CI_PROJECT_DIR": dir}
	for _, layer := range []any{global["variables"], job["variables"]} {
		m, _ := layer.(map[string]any)
		for k, v := range m {
			if s, ok := v.(string); ok {
				vars[k] = s
			}
		}
	}
	for range 10 {
		path = os.Expand(path, func(k string) string { return vars[k] })
	}
	return path, nil
}

// Preview returns the named job as gitlab-ci-local resolves it (`extends`,
// `default` and YAML anchors merged, variables not expanded) and the
// configuration's global keys.
func (p *Pipeline) Preview(name string) (job, global map[string]any, err error) {
	out, err := p.query("--preview")
	if err != nil {
		return nil, nil, err
	}
	var doc map[string]any
	if err := yaml.Unmarshal(out, &doc); err != nil {
		return nil, nil, fmt.Errorf("parse gitlab-ci-local's preview: %w", err)
	}
	job, ok := doc[name].(map[string]any)
	if !ok {
		return nil, nil, fmt.Errorf("the configuration has no job %s", name)
	}
	return job, doc, nil
}

// query runs gitlab-ci-local with an option that prints the configuration
// and runs nothing, and returns what it printed.
func (p *Pipeline) query(option string) ([]byte, error) {
	cmd := exec.Command(p.runner.Command, append(p.arguments(), option)...)
	cmd.Dir = p.repo
	cmd.Env = p.runner.environ()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("gitlab-ci-local %s: %w\n%s", option, err, p.runner.mask(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// ListedJob is a job of the pipeline as gitlab-ci-local lists it, its rules
// evaluated.
type ListedJob struct {
	Name string `json:"name"`
	// When is on_success, manual, never...
	When string `json:"when"`
}

// List returns the jobs the pipeline would hold, `when: never` included.
func (p *Pipeline) List() ([]ListedJob, error) {
	out, err := p.query("--list-json")
	if err != nil {
		return nil, err
	}
	var jobs []ListedJob
	if err := json.Unmarshal(out, &jobs); err != nil {
		return nil, fmt.Errorf("parse gitlab-ci-local's job list: %w", err)
	}
	return jobs, nil
}

// Exec runs a command after the job, as one more line of its script would:
// a job extending it (so with its variables and before_script, in a folder
// of its own with the job's artifacts) runs the command, whose own output is
// returned apart from the before_script's.
func (r *JobResult) Exec(ctx context.Context, name string, args ...string) (string, error) {
	p := r.pipeline
	p.mu.Lock()
	p.execs++
	n := p.execs
	p.mu.Unlock()
	outFile := filepath.Join(p.dir, fmt.Sprintf("exec-%d.out", n))
	line := shellQuote(name)
	for _, a := range args {
		line += " " + shellQuote(a)
	}
	line += " >" + shellQuote(outFile) + " 2>&1"
	out, err := p.runExtraJob(ctx, r.Name, []string{line})
	got, _ := os.ReadFile(outFile)
	if err != nil {
		return string(got), fmt.Errorf("%w (job log:\n%s)", err, out)
	}
	return string(got), nil
}

// ExpandInJob expands texts with the named job's variables as its shell
// would, without the CI_ENVIRONMENT_* variables, as GitLab expands
// environment:kubernetes.
func (p *Pipeline) ExpandInJob(ctx context.Context, name string, texts ...string) ([]string, error) {
	outFile := filepath.Join(p.dir, "expand.out")
	script := []string{"unset CI_ENVIRONMENT_NAME CI_ENVIRONMENT_SLUG CI_ENVIRONMENT_ACTION CI_ENVIRONMENT_TIER CI_ENVIRONMENT_URL"}
	for _, t := range texts {
		script = append(script, fmt.Sprintf("printf '%%s\\n' \"%s\" >>%s", strings.NewReplacer(`\`, `\\`, `"`, `\"`, "`", "\\`").Replace(t), shellQuote(outFile)))
	}
	if _, err := p.runExtraJob(ctx, name, script); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(outFile)
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n"), nil
}

// extraJob is the name of the job [JobResult.Exec] adds to the configuration.
const extraJob = "e2e_exec"

// runExtraJob runs script in a job added to the pipeline's configuration
// that extends the named job and needs its artifacts.
func (p *Pipeline) runExtraJob(ctx context.Context, name string, script []string) (string, error) {
	ci, err := os.ReadFile(filepath.Join(p.repo, ".gitlab-ci.yml"))
	if err != nil {
		return "", err
	}
	job := map[string]any{"extends": name, "script": script, "needs": []any{map[string]any{"job": name, "optional": true}}, "when": "on_success", "rules": []any{map[string]any{"when": "on_success"}}}
	extra, err := yaml.Marshal(map[string]any{extraJob: job})
	if err != nil {
		return "", err
	}
	file := ".gitlab-ci-e2e.yml"
	if err := os.WriteFile(filepath.Join(p.repo, file), append(append(ci, '\n'), extra...), 0o644); err != nil {
		return "", err
	}
	run, err := p.start(ctx, extraJob, "--file", file)
	if err != nil {
		return "", err
	}
	<-run.done
	log, _ := os.ReadFile(filepath.Join(p.dir, "state", "output", extraJob+".log"))
	return p.runner.mask(string(log) + run.out.String()), run.err
}

func (r *Runner) mask(log string) string {
	for _, secret := range r.Masked {
		if secret != "" {
			log = strings.ReplaceAll(log, secret, "[MASKED]")
		}
	}
	return log
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// refSlug is GitLab's CI_COMMIT_REF_SLUG: lowercased, cut to 63 bytes, every
// character but 0-9 and a-z replaced by '-', no leading or trailing '-'.
func refSlug(ref string) string {
	s := strings.ToLower(ref)
	if len(s) > 63 {
		s = s[:63]
	}
	s = strings.Map(func(r rune) rune {
		if ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') {
			return r
		}
		return '-'
	}, s)
	return strings.Trim(s, "-")
}

// copyTree copies the contents of src into dst, leaving out .terraform
// folders (a checkout never has them: they are ignored by Git).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() && (d.Name() == ".terraform" || d.Name() == ".git" || d.Name() == ".gitlab-ci-local") {
			return filepath.SkipDir
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		return copyFile(path, target)
	})
}

func copyFile(src, dst string) error {
	info, err := os.Stat(src)
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return nil
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, data, info.Mode().Perm())
}
