package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlab"
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

// Runner runs jobs of a CI configuration like a GitLab runner's shell
// executor, each in a fresh folder under WorkDir.
type Runner struct {
	Config  *CIConfig
	Project Project
	// Variables are the project's CI/CD variables (Settings > CI/CD); they
	// override the file's.
	Variables map[string]string
	// Masked values are replaced by [MASKED] in job logs, as GitLab masks
	// masked variables.
	Masked []string
	// Env is the executor's own environment (PATH, HOME, KUBECONFIG, ...),
	// below every CI/CD variable.
	Env map[string]string
	// WorkDir holds a folder per job.
	WorkDir string

	ids atomic.Int64
}

// PipelineOptions describe what triggered a pipeline.
type PipelineOptions struct {
	// Source is $CI_PIPELINE_SOURCE: "merge_request_event" or "push".
	Source string
	// Ref is the branch, e.g. "feature-x".
	Ref string
	// MergeRequestIID is set for merge request pipelines.
	MergeRequestIID string
	// Checkout is the folder holding the pipeline's commit: jobs get a copy
	// of it unless GIT_STRATEGY is none. Deleting it models a deleted branch.
	Checkout string
}

// Pipeline is one pipeline: its jobs share predefined variables and pass
// artifacts to each other.
type Pipeline struct {
	runner *Runner
	opts   PipelineOptions
	id     int64
	sha    string

	mu        sync.Mutex
	artifacts map[string]string // job name -> artifacts folder of its last successful run
	stageOf   map[string]int
}

// NewPipeline starts a pipeline; no job runs until asked.
func (r *Runner) NewPipeline(opts PipelineOptions) *Pipeline {
	id := r.ids.Add(1)
	return &Pipeline{
		runner:    r,
		opts:      opts,
		id:        id,
		sha:       fmt.Sprintf("%040x", id),
		artifacts: map[string]string{},
		stageOf:   map[string]int{},
	}
}

// RunningJob is a started job.
type RunningJob struct {
	Job *Job
	// Dir is $CI_PROJECT_DIR.
	Dir string
	// Env is the job's full environment.
	Env []string

	pipeline  *Pipeline
	buildDir  string
	cmd       *exec.Cmd
	out       *SyncBuffer
	done      chan struct{}
	result    *JobResult
	startedAt time.Time
}

// JobResult is a finished job.
type JobResult struct {
	Name string
	// Dir is $CI_PROJECT_DIR, kept after the job for inspection.
	Dir string
	Env []string
	// Log is the job log with masked values replaced.
	Log string
	// Err is nil when the script exited 0.
	Err      error
	Duration time.Duration
	// Report is the path of the job's terraform report artifact, if any.
	Report string

	beforeScript []string
	mask         func(string) string
}

// Run runs the named job to its end. A failed script is reported in the
// result's Err, not as Run's error, which is for jobs that could not start.
func (p *Pipeline) Run(ctx context.Context, name string) (*JobResult, error) {
	job, err := p.Start(ctx, name)
	if err != nil {
		return nil, err
	}
	return job.Wait(), nil
}

// Start starts the named job and returns at once.
func (p *Pipeline) Start(ctx context.Context, name string) (*RunningJob, error) {
	job, err := p.runner.Config.Job(name)
	if err != nil {
		return nil, err
	}
	jobID := p.runner.ids.Add(1)
	buildDir := filepath.Join(p.runner.WorkDir, fmt.Sprintf("p%d-%s-%d", p.id, name, jobID))
	projectDir := filepath.Join(buildDir, "project")
	if err := os.MkdirAll(projectDir, 0o755); err != nil {
		return nil, fmt.Errorf("create the project folder of job %s: %w", name, err)
	}

	vars := p.jobVariables(job, jobID, projectDir)
	if vars["GIT_STRATEGY"] != "none" {
		if p.opts.Checkout == "" {
			return nil, fmt.Errorf("job %s needs a checkout, and the pipeline has none", name)
		}
		if err := copyTree(p.opts.Checkout, projectDir); err != nil {
			return nil, fmt.Errorf("check out for job %s: %w", name, err)
		}
	}
	for _, dir := range p.dependencies(job) {
		if err := copyTree(dir, projectDir); err != nil {
			return nil, fmt.Errorf("download artifacts for job %s: %w", name, err)
		}
	}

	scriptPath := filepath.Join(buildDir, "script.sh")
	if err := os.WriteFile(scriptPath, []byte(shellScript(job)), 0o600); err != nil {
		return nil, fmt.Errorf("write the script of job %s: %w", name, err)
	}
	env := p.runner.environ(vars)
	out := &SyncBuffer{}
	cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", scriptPath)
	cmd.Dir = projectDir
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group: a kill reaches the CLI and the provider plugin it started.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	running := &RunningJob{Job: job, Dir: projectDir, Env: env, pipeline: p, buildDir: buildDir, cmd: cmd, out: out, done: make(chan struct{}), startedAt: time.Now()}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start job %s: %w", name, err)
	}
	go running.finish()
	return running, nil
}

// Kill sends SIGKILL to the job's whole process group, as a runner whose
// machine disappears would leave it: no cleanup, no unlock.
func (j *RunningJob) Kill() error {
	err := syscall.Kill(-j.cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// Done is closed when the job has ended.
func (j *RunningJob) Done() <-chan struct{} { return j.done }

// Log returns the log so far, masked.
func (j *RunningJob) Log() string { return j.pipeline.runner.mask(j.out.String()) }

// Wait waits for the job to end.
func (j *RunningJob) Wait() *JobResult {
	<-j.done
	return j.result
}

func (j *RunningJob) finish() {
	defer close(j.done)
	err := j.cmd.Wait()
	p := j.pipeline
	res := &JobResult{
		Name: j.Job.Name, Dir: j.Dir, Env: j.Env, Log: p.runner.mask(j.out.String()), Err: err, Duration: time.Since(j.startedAt),
		beforeScript: j.Job.BeforeScript, mask: p.runner.mask,
	}
	if err == nil {
		artifacts, report, aerr := p.collectArtifacts(j)
		if aerr != nil {
			res.Err = fmt.Errorf("upload artifacts: %w", aerr)
		} else {
			p.mu.Lock()
			p.artifacts[j.Job.Name] = artifacts
			p.stageOf[j.Job.Name] = slices.Index(p.runner.Config.Stages, j.Job.Stage)
			p.mu.Unlock()
			res.Report = report
		}
	}
	_ = os.WriteFile(filepath.Join(j.buildDir, "job.log"), []byte(res.Log), 0o600)
	j.result = res
}

// Exec runs a command after the job, in its project folder and with its
// environment, as one more line of its script would: the job's
// before_script runs first (its output is kept apart, so the command's own
// output, such as JSON, stays clean).
func (r *JobResult) Exec(ctx context.Context, name string, args ...string) (string, error) {
	var script strings.Builder
	script.WriteString("set -eo pipefail\nexec 3>&1 4>&2 >\"$E2E_BEFORE_LOG\" 2>&1\n")
	for _, line := range r.beforeScript {
		script.WriteString(line + "\n")
	}
	script.WriteString("exec 1>&3 2>&4 3>&- 4>&-\nexec \"$@\"\n")
	beforeLog := filepath.Join(filepath.Dir(r.Dir), fmt.Sprintf("exec-%d.log", time.Now().UnixNano()))
	cmd := exec.CommandContext(ctx, "bash", append([]string{"--noprofile", "--norc", "-c", script.String(), "bash", name}, args...)...)
	cmd.Dir = r.Dir
	cmd.Env = append(slices.Clone(r.Env), "E2E_BEFORE_LOG="+beforeLog)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		if before, rerr := os.ReadFile(beforeLog); rerr == nil {
			return out.String(), fmt.Errorf("%w (before_script output:\n%s)", err, r.mask(string(before)))
		}
	}
	return out.String(), err
}

// dependencies returns the artifact folders a job downloads: those of its
// needs, or without needs those of every earlier stage's jobs.
func (p *Pipeline) dependencies(job *Job) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var dirs []string
	if job.Needs != nil {
		for _, name := range job.Needs {
			if dir, ok := p.artifacts[name]; ok {
				dirs = append(dirs, dir)
			}
		}
		return dirs
	}
	stage := slices.Index(p.runner.Config.Stages, job.Stage)
	names := make([]string, 0, len(p.artifacts))
	for name := range p.artifacts {
		if p.stageOf[name] < stage {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		dirs = append(dirs, p.artifacts[name])
	}
	return dirs
}

// jobVariables merges variables by GitLab's precedence, lowest first:
// predefined, the file's global, the job's, the project's; then expands
// $VAR and ${VAR} references in the values.
func (p *Pipeline) jobVariables(job *Job, jobID int64, projectDir string) map[string]string {
	r, o := p.runner, p.opts
	vars := map[string]string{
		"CI":                   "true",
		"GITLAB_CI":            "true",
		"CI_SERVER_URL":        r.Project.ServerURL,
		"CI_API_V4_URL":        r.Project.APIURL,
		"CI_PROJECT_ID":        r.Project.ID,
		"CI_PROJECT_PATH":      r.Project.Path,
		"CI_PROJECT_PATH_SLUG": refSlug(r.Project.Path),
		"CI_PROJECT_DIR":       projectDir,
		"CI_DEFAULT_BRANCH":    r.Project.DefaultBranch,
		"CI_JOB_TOKEN":         r.Project.JobToken,
		"CI_PIPELINE_ID":       strconv.FormatInt(p.id, 10),
		"CI_PIPELINE_SOURCE":   o.Source,
		"CI_PIPELINE_URL":      fmt.Sprintf("%s/%s/-/pipelines/%d", r.Project.ServerURL, r.Project.Path, p.id),
		"CI_JOB_ID":            strconv.FormatInt(jobID, 10),
		"CI_JOB_NAME":          job.Name,
		"CI_JOB_STAGE":         job.Stage,
		"CI_JOB_URL":           fmt.Sprintf("%s/%s/-/jobs/%d", r.Project.ServerURL, r.Project.Path, jobID),
		"CI_COMMIT_SHA":        p.sha,
		"CI_COMMIT_REF_NAME":   o.Ref,
		"CI_COMMIT_REF_SLUG":   refSlug(o.Ref),
	}
	if r.Project.UserLogin != "" {
		vars["GITLAB_USER_LOGIN"] = r.Project.UserLogin
	}
	if o.MergeRequestIID != "" {
		vars["CI_MERGE_REQUEST_IID"] = o.MergeRequestIID
	} else {
		vars["CI_COMMIT_BRANCH"] = o.Ref
	}
	for _, layer := range []map[string]string{r.Config.Variables, job.Variables, r.Variables} {
		for k, v := range layer {
			vars[k] = v
		}
	}
	expanded := make(map[string]string, len(vars))
	for k, v := range vars {
		expanded[k] = expand(v, vars)
	}
	if job.Environment.Name != "" {
		name := expand(job.Environment.Name, expanded)
		expanded["CI_ENVIRONMENT_NAME"] = name
		expanded["CI_ENVIRONMENT_SLUG"] = gitlab.EnvironmentSlug(name)
		action := job.Environment.Action
		if action == "" {
			action = "start"
		}
		expanded["CI_ENVIRONMENT_ACTION"] = action
	}
	return expanded
}

// EnvironmentKubernetes returns the named job's `environment:kubernetes` as
// GitLab expands it for the environment's dashboard: with the job's
// variables but, as GitLab documents, none of CI_ENVIRONMENT_*.
func (p *Pipeline) EnvironmentKubernetes(name string) (EnvironmentKubernetes, error) {
	job, err := p.runner.Config.Job(name)
	if err != nil {
		return EnvironmentKubernetes{}, err
	}
	vars := p.jobVariables(job, 0, "")
	for k := range vars {
		if strings.HasPrefix(k, "CI_ENVIRONMENT_") {
			delete(vars, k)
		}
	}
	k := job.Environment.Kubernetes
	return EnvironmentKubernetes{Agent: expand(k.Agent, vars), Namespace: expand(k.Namespace, vars)}, nil
}

// maxExpandDepth bounds nested references, so a cycle cannot loop.
const maxExpandDepth = 10

// expand replaces $VAR and ${VAR} with their values, recursively, as the
// runner expands variables that reference variables. $$ is a literal $.
func expand(s string, vars map[string]string) string {
	for range maxExpandDepth {
		if !strings.Contains(s, "$") {
			return s
		}
		next := os.Expand(strings.ReplaceAll(s, "$$", "\x00"), func(name string) string { return vars[name] })
		next = strings.ReplaceAll(next, "\x00", "$$")
		if next == s {
			break
		}
		s = next
	}
	return strings.ReplaceAll(s, "$$", "$")
}

// environ builds the process environment: the executor's, then variables.
func (r *Runner) environ(vars map[string]string) []string {
	all := map[string]string{}
	for k, v := range r.Env {
		all[k] = v
	}
	for k, v := range vars {
		all[k] = v
	}
	env := make([]string, 0, len(all))
	for k, v := range all {
		env = append(env, k+"="+v)
	}
	slices.Sort(env)
	return env
}

func (r *Runner) mask(log string) string {
	for _, secret := range r.Masked {
		if secret != "" {
			log = strings.ReplaceAll(log, secret, "[MASKED]")
		}
	}
	return log
}

// shellScript is what the shell executor runs: before_script then script in
// one shell that stops at the first failing command, echoing each command.
func shellScript(job *Job) string {
	var b strings.Builder
	b.WriteString("set -eo pipefail\n")
	for _, line := range slices.Concat(job.BeforeScript, job.Script) {
		fmt.Fprintf(&b, "printf '%%s\\n' %s\n%s\n", shellQuote("$ "+line), line)
	}
	return b.String()
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

// collectArtifacts copies the job's artifacts:paths (and its terraform
// report) out of its project folder, as the runner uploads them.
func (p *Pipeline) collectArtifacts(j *RunningJob) (dir, report string, err error) {
	dir = filepath.Join(j.buildDir, "artifacts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	vars := map[string]string{}
	for _, kv := range j.Env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	patterns := slices.Clone(j.Job.ArtifactPaths)
	if j.Job.TerraformReport != "" {
		patterns = append(patterns, j.Job.TerraformReport)
	}
	for i, pattern := range patterns {
		rel, err := relativeToProject(expand(pattern, vars), j.Dir)
		if err != nil {
			return "", "", err
		}
		matches, err := filepath.Glob(filepath.Join(j.Dir, rel))
		if err != nil {
			return "", "", fmt.Errorf("artifact path %s: %w", pattern, err)
		}
		if len(matches) == 0 && i == len(patterns)-1 && j.Job.TerraformReport != "" {
			return "", "", fmt.Errorf("terraform report %s was not written", pattern)
		}
		for _, match := range matches {
			relMatch, _ := filepath.Rel(j.Dir, match)
			if err := copyPath(match, filepath.Join(dir, relMatch)); err != nil {
				return "", "", err
			}
			if j.Job.TerraformReport != "" && i == len(patterns)-1 {
				report = filepath.Join(dir, relMatch)
			}
		}
	}
	return dir, report, nil
}

// relativeToProject turns an artifact path into one relative to the project
// folder; absolute paths must lie inside it, as the runner requires.
func relativeToProject(path, projectDir string) (string, error) {
	if !filepath.IsAbs(path) {
		return filepath.Clean(path), nil
	}
	rel, err := filepath.Rel(projectDir, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("artifact path %s is outside the project folder %s", path, projectDir)
	}
	return rel, nil
}

// copyTree copies the contents of src into dst, leaving out .terraform
// folders (a checkout never has them: they are ignored by Git).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() && d.Name() == ".terraform" {
			return filepath.SkipDir
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		return copyFile(path, target)
	})
}

func copyPath(src, dst string) error {
	info, err := os.Stat(src)
	if err != nil {
		return err
	}
	if info.IsDir() {
		return copyTree(src, dst)
	}
	return copyFile(src, dst)
}

func copyFile(src, dst string) error {
	info, err := os.Stat(src)
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, info.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
