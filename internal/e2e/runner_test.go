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
    paths: [out.txt, "${CI_PROJECT_DIR}/dir/"]
    reports:
      terraform: out.txt
deploy:
  extends: .base
  stage: deploy
  variables:
    GIT_STRATEGY: none
  script:
    - test ! -e source.txt
    - cat out.txt dir/file.txt
    - echo "env $CI_ENVIRONMENT_NAME $CI_ENVIRONMENT_SLUG $CI_ENVIRONMENT_ACTION"
  environment:
    name: review/$CI_COMMIT_REF_SLUG
    action: stop
fail:
  stage: build
  script:
    - echo first
    - "false"
    - echo never
sleep:
  stage: build
  script:
    - sleep 300
`

func newTestRunner(t *testing.T) (*Runner, *Pipeline) {
	t.Helper()
	cfg, err := ParseCIConfig([]byte(runnerTestConfig))
	if err != nil {
		t.Fatal(err)
	}
	checkout := t.TempDir()
	if err := os.WriteFile(filepath.Join(checkout, "source.txt"), []byte("source"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &Runner{
		Config:    cfg,
		Project:   Project{ID: "7", Path: "group/app", JobToken: "s3cret-token", APIURL: "http://gitlab.invalid/api/v4"},
		Variables: map[string]string{"KEEP": "project"},
		Masked:    []string{"s3cret-token"},
		Env:       map[string]string{"PATH": os.Getenv("PATH")},
		WorkDir:   t.TempDir(),
	}
	return r, r.NewPipeline(PipelineOptions{Source: "merge_request_event", Ref: "Feature/X_1", MergeRequestIID: "3", Checkout: checkout})
}

func TestPipeline_artifactsVariablesAndMasking(t *testing.T) {
	_, p := newTestRunner(t)
	ctx := context.Background()

	build, err := p.Run(ctx, "build")
	if err != nil {
		t.Fatal(err)
	}
	if build.Err != nil {
		t.Fatalf("build failed: %v\n%s", build.Err, build.Log)
	}
	for _, want := range []string{
		"$ echo \"before $GREETING\"\nbefore hello\n",
		// Job variables beat the template's and the global ones; project variables beat all;
		// references expand with the final values.
		"target feature-x-1-job keep project token [MASKED]\n",
	} {
		if !strings.Contains(build.Log, want) {
			t.Errorf("build log lacks %q:\n%s", want, build.Log)
		}
	}
	if strings.Contains(build.Log, "s3cret-token") {
		t.Errorf("build log shows the job token:\n%s", build.Log)
	}
	if build.Report == "" || filepath.Base(build.Report) != "out.txt" {
		t.Errorf("terraform report = %q, want the out.txt artifact", build.Report)
	}

	// A command after the job sees the job's environment, and only its own output.
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
	// The earlier stage's artifacts, no checkout, and the environment's variables.
	for _, want := range []string{"built\nnested\n", "\nenv review/feature-x-1 review-feature-x-", " stop\n"} {
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

func TestCIConfig_extendsCycleIsAnError(t *testing.T) {
	cfg, err := ParseCIConfig([]byte("a:\n  extends: b\n  script: [x]\nb:\n  extends: a\n  script: [x]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.Job("a"); err == nil || !strings.Contains(err.Error(), "loop") {
		t.Errorf("Job(a) error = %v, want an extends loop", err)
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
// lifecycle depends on, checked without a cluster.
func TestExamplePipeline_shape(t *testing.T) {
	cfg, err := LoadCIConfig(filepath.Join(exampleDir(t), ".gitlab-ci.yml"))
	if err != nil {
		t.Fatal(err)
	}
	job := func(name string) *Job {
		t.Helper()
		j, err := cfg.Job(name)
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	plan, deploy, stop := job("plan"), job("deploy_review"), job("stop_review")

	if plan.TerraformReport == "" || !slices.ContainsFunc(plan.ArtifactPaths, func(p string) bool { return strings.HasSuffix(p, "plan.cache") }) {
		t.Errorf("plan keeps %v and reports %q, want plan.cache and a terraform report", plan.ArtifactPaths, plan.TerraformReport)
	}
	if deploy.Environment.OnStop != "stop_review" || deploy.Environment.AutoStopIn == "" {
		t.Errorf("deploy_review environment = %+v, want on_stop stop_review and auto_stop_in", deploy.Environment)
	}
	if !slices.Contains(deploy.Needs, "plan") {
		t.Errorf("deploy_review needs %v, want plan (it applies the saved plan)", deploy.Needs)
	}
	for _, want := range []string{"*.tf", ".terraform.lock.hcl"} {
		if !slices.ContainsFunc(deploy.ArtifactPaths, func(p string) bool { return strings.HasSuffix(p, want) }) {
			t.Errorf("deploy_review keeps %v, want %s for the stop job", deploy.ArtifactPaths, want)
		}
	}
	if stop.Environment.Action != "stop" || stop.Environment.Name != deploy.Environment.Name {
		t.Errorf("stop_review environment = %+v, want action stop on %q", stop.Environment, deploy.Environment.Name)
	}
	if stop.Variables["GIT_STRATEGY"] != "none" {
		t.Errorf("stop_review GIT_STRATEGY = %q, want none: the branch may be gone", stop.Variables["GIT_STRATEGY"])
	}
	if stop.Stage != deploy.Stage {
		t.Errorf("stop_review is in stage %q, deploy_review in %q; GitLab runs on_stop jobs of the deploy's stage", stop.Stage, deploy.Stage)
	}
	if !slices.Equal(stop.Needs, []string{"deploy_review"}) {
		t.Errorf("stop_review needs %v, want [deploy_review] for its artifacts", stop.Needs)
	}
	for _, j := range []*Job{plan, deploy, stop} {
		if j.Variables["TF_STATE_NAME"] != "review-${CI_COMMIT_REF_SLUG}" {
			t.Errorf("%s TF_STATE_NAME = %q, want one state per review environment", j.Name, j.Variables["TF_STATE_NAME"])
		}
	}
	if deploy.ResourceGroup == "" || stop.ResourceGroup != deploy.ResourceGroup {
		t.Errorf("resource groups: deploy %q, stop %q; want the same one, serializing jobs on a state", deploy.ResourceGroup, stop.ResourceGroup)
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
