package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

const runnerTestConfig = `
workflow:
  rules:
    - if: $CI_PIPELINE_SOURCE == "merge_request_event"
stages: [build, deploy]
variables:
  GREETING: hello
  TARGET: ${CI_COMMIT_REF_SLUG}-$STATE
  STATE: global
.base:
  before_script:
    - echo "before $GREETING"
  variables:
    STATE: base
    KEEP: base
build:
  extends: .base
  stage: build
  variables:
    STATE: job
  script:
    - echo "target $TARGET keep $KEEP token $CI_JOB_TOKEN"
    - echo built > out.txt
    - mkdir -p dir && echo nested > dir/file.txt
  artifacts:
    access: developer
    paths: [out.txt, "${CI_PROJECT_DIR}/dir/"]
    reports:
      terraform: ${CI_PROJECT_DIR}/out.txt
deploy:
  extends: .base
  stage: deploy
  needs: [build]
  script:
    - cat out.txt dir/file.txt
    - echo "env $CI_ENVIRONMENT_NAME $CI_ENVIRONMENT_ACTION"
  environment:
    name: review/$CI_COMMIT_REF_SLUG
    action: stop
  rules:
    - if: $CI_PIPELINE_SOURCE == "merge_request_event"
      when: manual
production:
  stage: deploy
  script: [echo production]
  rules:
    - if: $CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH
branch_pipelines_only:
  stage: build
  script: [echo branch]
  rules:
    - if: $CI_COMMIT_BRANCH
fail:
  stage: build
  script:
    - echo first
    - "false"
    - echo never
  rules:
    - when: manual
sleep:
  stage: build
  script:
    - sleep 300
  rules:
    - when: manual
`

// gitlabCILocal is the gitlab-ci-local command, installed on first use.
func gitlabCILocal(t *testing.T) string {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	gcl, err := FindGitLabCILocal(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("toolchain: gitlab-ci-local=%s", gcl)
	return gcl
}

func newTestRunner(t *testing.T) (*Runner, *Pipeline) {
	t.Helper()
	checkout := t.TempDir()
	if err := os.WriteFile(filepath.Join(checkout, ".gitlab-ci.yml"), []byte(runnerTestConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &Runner{
		Command:   gitlabCILocal(t),
		Project:   Project{ID: "7", Path: "group/app", ServerURL: "https://gitlab.example.com", JobToken: "s3cret-token", APIURL: "http://gitlab.invalid/api/v4", DefaultBranch: "main"},
		Variables: map[string]string{"KEEP": "project"},
		Masked:    []string{"s3cret-token"},
		Env: map[string]string{"PATH": os.Getenv("PATH"), "HOME": t.TempDir(),
			// gitlab-ci-local reads GCL_* as its options: this one would run build again before deploy.
			"GCL_NEEDS": "true"},
		WorkDir: t.TempDir(),
	}
	p, err := r.NewPipeline(PipelineOptions{Source: "merge_request_event", Ref: "Feature/X_1", MergeRequestIID: "3", Checkout: checkout})
	if err != nil {
		t.Fatal(err)
	}
	return r, p
}

// The pipeline runs what its rules select (not the production job, not the branch pipelines'
// one, not the manual ones), with GitLab's variable precedence, and a manual job played later gets its needs'
// artifacts; masked values never reach a log.
func TestPipeline_artifactsVariablesAndMasking(t *testing.T) {
	_, p := newTestRunner(t)
	ctx := context.Background()

	run, err := p.RunPipeline(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := run.Names(); !slices.Equal(got, []string{"build"}) || run.Err != nil {
		t.Fatalf("the merge request pipeline ran %v (%v), want [build]:\n%s", got, run.Err, run.Output)
	}
	build := run.Job("build")
	for _, want := range []string{
		"before hello\n",
		// Job variables beat the template's and the global ones; project variables beat all;
		// references expand with the final values.
		"target feature-x-1-job keep project token [MASKED]\n",
	} {
		if !strings.Contains(build.Log, want) {
			t.Errorf("build log lacks %q:\n%s", want, build.Log)
		}
	}
	if strings.Contains(build.Log+run.Output, "s3cret-token") {
		t.Errorf("build log shows the job token:\n%s", build.Log)
	}
	if build.Report != filepath.Join(build.Dir, "out.txt") {
		t.Errorf("terraform report = %q, want the out.txt in %s", build.Report, build.Dir)
	}

	// A command after the job sees the job's variables, and only its own output.
	if out, err := build.Exec(ctx, "sh", "-c", "echo exec $STATE"); err != nil || out != "exec job\n" {
		t.Errorf("Exec after build = %q, %v; want only \"exec job\"", out, err)
	}

	deploy, err := p.Run(ctx, "deploy")
	if err != nil {
		t.Fatal(err)
	}
	if deploy.Err != nil {
		t.Fatalf("deploy failed: %v\n%s", deploy.Err, deploy.Log)
	}
	// The needed job's artifacts, and the environment's variables.
	for _, want := range []string{"built\nnested\n", "\nenv review/feature-x-1 stop\n"} {
		if !strings.Contains(deploy.Log, want) {
			t.Errorf("deploy log lacks %q:\n%s", want, deploy.Log)
		}
	}
}

func TestPipeline_failingCommandStopsTheJob(t *testing.T) {
	_, p := newTestRunner(t)
	res, err := p.Run(context.Background(), "fail")
	if err != nil {
		t.Fatal(err)
	}
	if res.Err == nil {
		t.Fatalf("job with a failing command succeeded:\n%s", res.Log)
	}
	if !strings.Contains(res.Log, "first") || strings.Contains(res.Log, "never") {
		t.Errorf("log = %q, want the commands up to the failing one and none after", res.Log)
	}
}

func TestPipeline_killEndsTheProcessGroup(t *testing.T) {
	_, p := newTestRunner(t)
	job, err := p.Start(context.Background(), "sleep")
	if err != nil {
		t.Fatal(err)
	}
	// The job's shell is started once gitlab-ci-local has prepared its folder.
	if err := pollUntil(context.Background(), func(context.Context) (bool, error) { return strings.Contains(job.Log(), "$ sleep 300"), nil }); err != nil {
		t.Fatalf("the job never started its script:\n%s", job.Log())
	}
	if err := job.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-job.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("job still running 30s after SIGKILL")
	}
	if res := job.Wait(); res.Err == nil || !strings.Contains(res.Err.Error(), "killed") {
		t.Errorf("killed job's error = %v, want a kill", res.Err)
	}
}

func TestRefSlug(t *testing.T) {
	for ref, want := range map[string]string{
		"main":                         "main",
		"Feature/Add_Thing":            "feature-add-thing",
		"-x-":                          "x",
		strings.Repeat("a", 70) + "/b": strings.Repeat("a", 63),
	} {
		if got := refSlug(ref); got != want {
			t.Errorf("refSlug(%q) = %q, want %q", ref, got, want)
		}
	}
}

// The shipped example is the pipeline the end-to-end test runs; these are the properties the
// lifecycle depends on, checked on the configuration gitlab-ci-local resolves, without a cluster.
func TestExamplePipeline_shape(t *testing.T) {
	r, _ := newTestRunner(t)
	p, err := r.NewPipeline(PipelineOptions{Source: "merge_request_event", Ref: "feature", MergeRequestIID: "3", Checkout: exampleDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	job := func(name string) map[string]any {
		t.Helper()
		j, _, err := p.Preview(name)
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	plan, deploy, stop := job("plan"), job("deploy_review"), job("stop_review")
	get := func(m map[string]any, path ...string) any {
		var v any = m
		for _, k := range path {
			v = v.(map[string]any)[k]
		}
		return v
	}
	needs := func(j map[string]any) []string {
		var out []string
		for _, n := range j["needs"].([]any) {
			out = append(out, n.(map[string]any)["job"].(string))
		}
		return out
	}
	paths := func(j map[string]any) []string {
		var out []string
		for _, p := range get(j, "artifacts", "paths").([]any) {
			out = append(out, p.(string))
		}
		return out
	}

	if report, _ := get(plan, "artifacts", "reports", "terraform").(string); report == "" || !slices.ContainsFunc(paths(plan), func(p string) bool { return strings.HasSuffix(p, "plan.cache") }) {
		t.Errorf("plan keeps %v and reports %q, want plan.cache and a terraform report", paths(plan), report)
	}
	for _, j := range []map[string]any{plan, deploy} {
		if access := get(j, "artifacts", "access"); access != "developer" {
			t.Errorf("artifacts:access = %v, want developer: the artifacts hold the plan", access)
		}
	}
	if get(deploy, "environment", "on_stop") != "stop_review" || get(deploy, "environment", "auto_stop_in") == nil {
		t.Errorf("deploy_review environment = %v, want on_stop stop_review and auto_stop_in", deploy["environment"])
	}
	if !slices.Contains(needs(deploy), "plan") {
		t.Errorf("deploy_review needs %v, want plan (it applies the saved plan)", needs(deploy))
	}
	for _, want := range []string{"*.tf", ".terraform.lock.hcl"} {
		if !slices.ContainsFunc(paths(deploy), func(p string) bool { return strings.HasSuffix(p, want) }) {
			t.Errorf("deploy_review keeps %v, want %s for the stop job", paths(deploy), want)
		}
	}
	if get(stop, "environment", "action") != "stop" || get(stop, "environment", "name") != get(deploy, "environment", "name") {
		t.Errorf("stop_review environment = %v, want action stop on %v", stop["environment"], get(deploy, "environment", "name"))
	}
	if get(stop, "variables", "GIT_STRATEGY") != "none" {
		t.Errorf("stop_review GIT_STRATEGY = %v, want none: the branch may be gone", get(stop, "variables", "GIT_STRATEGY"))
	}
	if stop["stage"] != deploy["stage"] {
		t.Errorf("stop_review is in stage %v, deploy_review in %v; GitLab runs on_stop jobs of the deploy's stage", stop["stage"], deploy["stage"])
	}
	if !slices.Equal(needs(stop), []string{"deploy_review"}) {
		t.Errorf("stop_review needs %v, want [deploy_review] for its artifacts", needs(stop))
	}
	for name, j := range map[string]map[string]any{"plan": plan, "deploy_review": deploy, "stop_review": stop} {
		if get(j, "variables", "TF_STATE_NAME") != "review-${CI_COMMIT_REF_SLUG}" {
			t.Errorf("%s TF_STATE_NAME = %v, want one state per review environment", name, get(j, "variables", "TF_STATE_NAME"))
		}
	}
	if deploy["resource_group"] == nil || stop["resource_group"] != deploy["resource_group"] {
		t.Errorf("resource groups: deploy %v, stop %v; want the same one, serializing jobs on a state", deploy["resource_group"], stop["resource_group"])
	}
}

// The example's rules, as gitlab-ci-local evaluates them: a merge request pipeline holds the
// review jobs, its stop job manual; the default branch's holds production's. No cluster needed.
func TestExamplePipeline_jobsOfEachPipeline(t *testing.T) {
	r, _ := newTestRunner(t)
	for _, c := range []struct {
		opts PipelineOptions
		want []string
	}{
		{PipelineOptions{Source: "merge_request_event", Ref: "feature", MergeRequestIID: "3"}, []string{"deploy_review on_success", "plan on_success", "stop_review manual", "validate on_success"}},
		{PipelineOptions{Source: "push", Ref: "main"}, []string{"deploy_production on_success", "plan_production on_success", "validate on_success"}},
	} {
		c.opts.Checkout = exampleDir(t)
		p, err := r.NewPipeline(c.opts)
		if err != nil {
			t.Fatal(err)
		}
		jobs, err := p.List()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, j := range jobs {
			if j.When != "never" {
				got = append(got, j.Name+" "+j.When)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("a %s pipeline on %s holds %v, want %v", c.opts.Source, c.opts.Ref, got, c.want)
		}
	}
}

// exampleDir is examples/gitlab-ci of this checkout.
func exampleDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "examples", "gitlab-ci"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".gitlab-ci.yml")); err != nil {
		t.Fatalf("the example pipeline: %v", err)
	}
	return dir
}
