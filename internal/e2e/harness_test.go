package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlabstate"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/testcluster"
)

// The GitLab project the pipelines run for.
const (
	projectID   = "4242"
	projectPath = "gitlabk8s/e2e"
	gitlabUser  = "e2e-maintainer"
)

// harness is what every end-to-end test shares: the local cluster, the state
// server and the provider mirror. It is set up once per test binary.
type harness struct {
	repoRoot string
	cluster  *testcluster.Cluster
	kube     kubernetes.Interface
	state    *gitlabstate.Server
	gate     *writeGate
	apiURL   string
	jobToken string
	// deleteToken is the project access token with the Maintainer role that
	// deletes states: the janitor's protected TF_STATE_JANITOR_TOKEN, or the
	// stop job's opt-in TF_STATE_DELETE_TOKEN.
	deleteToken string
	// noteToken is the project access token with the Reporter role the plan job posts its
	// report with (MR_NOTE_TOKEN).
	noteToken string
	cliConfig string
	// gitlabCILocal runs the pipelines.
	gitlabCILocal string
	workDir       string
	server        *httptest.Server

	tofuOnce sync.Once
	tofu     CLI
	tofuErr  error
}

var (
	harnessOnce sync.Once
	shared      *harness
	harnessErr  error
)

// TestMain removes what the shared harness built (the provider mirror is large) after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		shared.server.Close()
		_ = os.RemoveAll(shared.workDir)
	}
	os.Exit(code)
}

// setup returns the shared harness, skipping the test unless TF_ACC is set.
func setup(t *testing.T) *harness {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("end-to-end test: set TF_ACC=1 to run the real CLIs against the local cluster")
	}
	harnessOnce.Do(func() { shared, harnessErr = newHarness() })
	if harnessErr != nil {
		t.Fatal(harnessErr)
	}
	t.Logf("toolchain: gitlab-ci-local=%s", shared.gitlabCILocal)
	return shared
}

func newHarness() (*harness, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	// The pipeline's plan job converts the plan for the merge-request widget with jq, as
	// GitLab's own templates do.
	if _, err := exec.LookPath("jq"); err != nil {
		return nil, fmt.Errorf("the example pipeline needs jq (Debian package jq): %w", err)
	}
	cluster, err := testcluster.Ensure(ctx)
	if err != nil {
		return nil, fmt.Errorf("start the local cluster: %w", err)
	}
	kube, err := cluster.Clientset(cluster.AdminContext)
	if err != nil {
		return nil, err
	}
	// The harness outlives every test, so its folder is not a t.TempDir.
	workDir, err := ProcessTempDir("gitlabk8s-e2e-")
	if err != nil {
		return nil, err
	}
	cliConfig, err := InstallProviderMirror(ctx, root, filepath.Join(workDir, "mirror"))
	if err != nil {
		return nil, err
	}
	gcl, err := FindGitLabCILocal(ctx, root)
	if err != nil {
		return nil, err
	}
	token, deleteToken, noteToken := randomHex(16), "glpat-"+randomHex(16), "glpat-"+randomHex(16)
	state := gitlabstate.New(gitlabstate.Config{
		ProjectID:   projectID,
		ProjectPath: projectPath,
		Users: []gitlabstate.User{
			// The job token of a Developer: it may not delete states.
			{Username: gitlabUser, JobToken: token},
			{Username: "project_" + projectID + "_bot", PersonalAccessToken: deleteToken, Maintainer: true},
			{Username: "project_" + projectID + "_bot_report", PersonalAccessToken: noteToken, NotesAccess: true},
		},
	})
	gate := &writeGate{}
	server := httptest.NewServer(gate.wrap(state))
	return &harness{
		repoRoot:      root,
		cluster:       cluster,
		kube:          kube,
		state:         state,
		gate:          gate,
		apiURL:        server.URL + "/api/v4",
		jobToken:      token,
		deleteToken:   deleteToken,
		noteToken:     noteToken,
		cliConfig:     cliConfig,
		gitlabCILocal: gcl,
		workDir:       workDir,
		server:        server,
	}, nil
}

// forEachCLI runs scenario with each command line: terraform when there is one
// (terraform cannot be built from source here, so without it the subtest
// skips, saying why), and OpenTofu, built on first use. Each subtest logs the
// CLI it ran ("toolchain: NAME=PATH"), which make test's summary reports.
func (h *harness) forEachCLI(t *testing.T, scenario func(t *testing.T, cli CLI)) {
	t.Run("terraform", func(t *testing.T) {
		cli, err := FindTerraform()
		if err != nil {
			t.Skipf("no terraform: set GITLABK8S_TERRAFORM or put terraform on PATH (%v)", err)
		}
		t.Logf("toolchain: terraform=%s", cli.Path)
		scenario(t, cli)
	})
	t.Run("tofu", func(t *testing.T) {
		h.tofuOnce.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
			defer cancel()
			h.tofu, h.tofuErr = BuildOpenTofu(ctx, h.repoRoot)
		})
		if h.tofuErr != nil {
			t.Fatal(h.tofuErr)
		}
		t.Logf("toolchain: tofu=%s", h.tofu.Path)
		scenario(t, h.tofu)
	})
}

// reviewApp is one merge request's review app: a branch whose commits are
// folders, pipelines run with the example's .gitlab-ci.yml, and the state
// and namespace that belong to it.
type reviewApp struct {
	t      *testing.T
	h      *harness
	cli    CLI
	branch string
	runner *Runner
	// tree is the branch's working tree; each commit snapshots it.
	tree      string
	snapshots []string
	// canary is the value of the sensitive TF_VAR_api_key.
	canary string
	// mergeRequestIID is the branch's merge request, part of its namespace.
	mergeRequestIID string
}

func newReviewApp(t *testing.T, h *harness, cli CLI, scenario string) *reviewApp {
	t.Helper()
	app := &reviewApp{
		t:      t,
		h:      h,
		cli:    cli,
		branch: fmt.Sprintf("%s-%s-%s", scenario, cli.Name, randomHex(2)),
		tree:   t.TempDir(),
		canary: "canary-" + randomHex(8),
		// Unique, so concurrent review apps get namespaces of their own.
		mergeRequestIID: strconv.FormatInt(time.Now().UnixNano()%1_000_000_000, 10),
	}
	if err := copyTree(exampleDir(t), app.tree); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	app.runner = &Runner{
		Command: h.gitlabCILocal,
		Project: Project{
			ID: projectID, Path: projectPath, ServerURL: "https://gitlab.example.com",
			APIURL: h.apiURL, JobToken: h.jobToken, DefaultBranch: "main", UserLogin: gitlabUser,
		},
		// What a project sets in Settings > CI/CD > Variables.
		Variables: map[string]string{
			"TF_BIN":              cli.Path,
			"TF_VAR_kube_context": h.cluster.AdminContext,
			"TF_VAR_api_key":      app.canary,
			"MR_NOTE_TOKEN":       h.noteToken,
		},
		// The tokens are masked as GitLab masks them. The canary is deliberately not: the
		// provider must keep it out of logs by itself.
		Masked: []string{h.jobToken, h.deleteToken, h.noteToken},
		Env: map[string]string{
			"PATH":               os.Getenv("PATH"),
			"HOME":               home,
			"TMPDIR":             os.TempDir(),
			"KUBECONFIG":         h.cluster.Kubeconfig,
			"TF_CLI_CONFIG_FILE": h.cliConfig,
			"CHECKPOINT_DISABLE": "1",
		},
		WorkDir: t.TempDir(),
	}
	t.Cleanup(app.cleanup)
	return app
}

// deleteStateInStopJob opts in to the stop job deleting the emptied state
// itself, with TF_STATE_DELETE_TOKEN.
func (a *reviewApp) deleteStateInStopJob() {
	a.runner.Variables["TF_STATE_DELETE_TOKEN"] = a.h.deleteToken
}

// reportNotes returns the notes of the branch's merge request.
func (a *reviewApp) reportNotes() []gitlabstate.Note {
	a.t.Helper()
	iid, err := strconv.ParseInt(a.mergeRequestIID, 10, 64)
	if err != nil {
		a.t.Fatal(err)
	}
	return a.h.state.MergeRequestNotes(iid)
}

// jobFile reads a file a finished job left in its project folder.
func (a *reviewApp) jobFile(res *JobResult, name string) string {
	a.t.Helper()
	data, err := os.ReadFile(filepath.Join(res.Dir, name))
	if err != nil {
		a.t.Fatalf("job %s: %v", res.Name, err)
	}
	return string(data)
}

// stateName is the branch's state, TF_STATE_NAME of the review jobs.
func (a *reviewApp) stateName() string { return "review-" + refSlug(a.branch) }

// commit edits the working tree with values.yaml's content and returns a
// snapshot of it, the checkout of a new commit.
func (a *reviewApp) commit(values string) string {
	a.t.Helper()
	if err := os.WriteFile(filepath.Join(a.tree, "values.yaml"), []byte(values), 0o644); err != nil {
		a.t.Fatal(err)
	}
	snapshot := filepath.Join(filepath.Dir(a.tree), fmt.Sprintf("%s-commit-%d", filepath.Base(a.tree), len(a.snapshots)+1))
	if err := copyTree(a.tree, snapshot); err != nil {
		a.t.Fatal(err)
	}
	a.snapshots = append(a.snapshots, snapshot)
	return snapshot
}

// deleteBranch removes the branch and its commits, as merging a merge request
// with "Delete source branch" does: no job can check it out any more.
func (a *reviewApp) deleteBranch() {
	a.t.Helper()
	for _, dir := range append([]string{a.tree}, a.snapshots...) {
		if err := os.RemoveAll(dir); err != nil {
			a.t.Fatal(err)
		}
	}
}

// pipeline prepares a merge request pipeline for a commit.
func (a *reviewApp) pipeline(checkout string) *Pipeline {
	a.t.Helper()
	p, err := a.runner.NewPipeline(PipelineOptions{Source: "merge_request_event", Ref: a.branch, MergeRequestIID: a.mergeRequestIID, Checkout: checkout})
	if err != nil {
		a.t.Fatal(err)
	}
	return p
}

// runPipeline runs a pipeline as GitLab creates it and fails the test unless
// it ran exactly the jobs named, all successfully.
func (a *reviewApp) runPipeline(ctx context.Context, p *Pipeline, jobs ...string) *PipelineResult {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Duration(len(jobs))*jobTimeout)
	defer cancel()
	res, err := p.RunPipeline(ctx)
	if err != nil {
		a.t.Fatal(err)
	}
	for _, job := range res.Jobs {
		a.logJob(job)
	}
	slices.Sort(jobs)
	if got := res.Names(); !slices.Equal(got, jobs) {
		a.t.Fatalf("the pipeline ran %v, want %v:\n%s", got, jobs, res.Output)
	}
	if res.Err != nil {
		a.t.Fatalf("the pipeline failed: %v\n%s", res.Err, res.Output)
	}
	return res
}

// jobTimeout bounds one job: on the local cluster a deploy takes seconds, and a stuck one
// should fail the test with its log well before the release's own 5m timeout and rollback.
const jobTimeout = 4 * time.Minute

// mustRun runs a job and fails the test when it fails, with its log.
func (a *reviewApp) mustRun(ctx context.Context, p *Pipeline, job string) *JobResult {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(ctx, jobTimeout)
	defer cancel()
	res, err := p.Run(ctx, job)
	if err != nil {
		a.t.Fatal(err)
	}
	a.logJob(res)
	if res.Err != nil {
		a.t.Fatalf("job %s failed: %v\n%s", job, res.Err, res.Log)
	}
	return res
}

func (a *reviewApp) logJob(res *JobResult) {
	a.t.Helper()
	a.t.Logf("---- job %s (%s, %s) ----\n%s", res.Name, res.Duration.Round(time.Second), errText(res.Err), res.Log)
}

// output reads a Terraform output in a finished job's folder.
func (a *reviewApp) output(ctx context.Context, res *JobResult, name string) string {
	a.t.Helper()
	out, err := res.Exec(ctx, a.cli.Path, "output", "-raw", name)
	if err != nil {
		a.t.Fatalf("%s output %s: %v\n%s", a.cli.Name, name, err, out)
	}
	return strings.TrimSpace(out)
}

// planJSON is `show -json plan.cache` in a finished plan job's folder.
func (a *reviewApp) planJSON(ctx context.Context, res *JobResult) *plan {
	a.t.Helper()
	out, err := res.Exec(ctx, a.cli.Path, "show", "-json", "plan.cache")
	if err != nil {
		a.t.Fatalf("%s show -json plan.cache: %v\n%s", a.cli.Name, err, out)
	}
	var p plan
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		a.t.Fatalf("parse the JSON plan: %v", err)
	}
	return &p
}

// storedState returns the latest version of the branch's state on the server.
func (a *reviewApp) storedState() (*tfState, gitlabstate.State) {
	a.t.Helper()
	st, ok := a.h.state.State(a.stateName())
	if !ok {
		a.t.Fatalf("the server has no state %s (it has %v)", a.stateName(), a.h.state.Names())
	}
	var parsed tfState
	if latest := st.Latest(); latest != nil {
		if err := json.Unmarshal(latest, &parsed); err != nil {
			a.t.Fatalf("state %s is not valid state JSON: %v", a.stateName(), err)
		}
	}
	return &parsed, st
}

// namespaceGone waits until the namespace no longer exists.
func (a *reviewApp) namespaceGone(ctx context.Context, ns string) error {
	return wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := a.h.kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// namespace is the review app's namespace as the example pipeline names it,
// "review-<project id>-<merge request iid>".
func (a *reviewApp) namespace() string {
	return "review-" + projectID + "-" + a.mergeRequestIID
}

// stop plays the pipeline's manual stop_review job after the branch is
// deleted, and checks that the namespace and the state are gone.
func (a *reviewApp) stop(ctx context.Context, p *Pipeline) *JobResult {
	a.t.Helper()
	a.deleteBranch()
	if err := p.DeleteBranch(); err != nil {
		a.t.Fatal(err)
	}
	res := a.mustRun(ctx, p, "stop_review")
	// The checkout has a README.md, the deploy job's artifacts have not.
	if _, err := os.Stat(filepath.Join(res.Dir, "README.md")); !os.IsNotExist(err) {
		a.t.Errorf("stop_review's folder holds README.md (err %v): it ran on a checkout, not on artifacts only", err)
	}
	if err := a.namespaceGone(ctx, a.namespace()); err != nil {
		a.t.Errorf("namespace %s still exists after stop_review: %v", a.namespace(), err)
	}
	if _, optIn := a.runner.Variables["TF_STATE_DELETE_TOKEN"]; optIn {
		if st, ok := a.h.state.State(a.stateName()); ok {
			a.t.Errorf("state %s still exists after stop_review (%d versions, lock %+v)", a.stateName(), len(st.Versions), st.Lock)
		}
		if !strings.Contains(res.Log, "Deleted the Terraform state "+a.stateName()) {
			a.t.Errorf("stop_review's log does not say it deleted the state %s", a.stateName())
		}
		return res
	}
	// Without the opt-in the state stays, emptied and unlocked, for the janitor.
	st, raw := a.storedState()
	if managed := st.managed(); len(managed) != 0 || raw.Lock != nil {
		a.t.Errorf("state %s after stop_review holds %v, lock %+v; want it empty and unlocked", a.stateName(), managed, raw.Lock)
	}
	if !strings.Contains(res.Log, "The empty state "+a.stateName()+" stays until the scheduled janitor deletes it.") {
		a.t.Errorf("stop_review's log does not say the janitor deletes the state %s", a.stateName())
	}
	return res
}

// cleanup deletes the namespace when a failed test left it behind.
func (a *reviewApp) cleanup() { a.deleteNamespace(a.namespace()) }

// deleteNamespace deletes a namespace a failed test left behind.
func (a *reviewApp) deleteNamespace(ns string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := a.h.kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	switch {
	case err == nil:
		a.t.Logf("cleanup: deleted namespace %s left by the test", ns)
	case !apierrors.IsNotFound(err):
		a.t.Logf("cleanup: delete namespace %s: %v", ns, err)
	}
}

// plan is the part of Terraform's JSON plan format the tests read.
type plan struct {
	ResourceChanges []resourceChange `json:"resource_changes"`
}

type resourceChange struct {
	Address string `json:"address"`
	Type    string `json:"type"`
	Change  struct {
		Actions      []string       `json:"actions"`
		Before       map[string]any `json:"before"`
		After        map[string]any `json:"after"`
		AfterUnknown map[string]any `json:"after_unknown"`
	} `json:"change"`
}

// changed returns the resource changes that do something.
func (p *plan) changed() []resourceChange {
	var out []resourceChange
	for _, rc := range p.ResourceChanges {
		if len(rc.Change.Actions) == 1 && (rc.Change.Actions[0] == "no-op" || rc.Change.Actions[0] == "read") {
			continue
		}
		out = append(out, rc)
	}
	return out
}

// tfState is the part of the state format the tests read.
type tfState struct {
	Serial    int    `json:"serial"`
	Lineage   string `json:"lineage"`
	Resources []struct {
		Mode      string `json:"mode"`
		Type      string `json:"type"`
		Name      string `json:"name"`
		Instances []struct {
			Attributes map[string]any `json:"attributes"`
		} `json:"instances"`
	} `json:"resources"`
}

// managed returns the managed resources' addresses.
func (s *tfState) managed() []string {
	var out []string
	for _, r := range s.Resources {
		if r.Mode == "managed" {
			out = append(out, r.Type+"."+r.Name)
		}
	}
	return out
}

// attribute returns an attribute of the first instance of a managed resource.
func (s *tfState) attribute(address, attr string) any {
	for _, r := range s.Resources {
		if r.Mode == "managed" && r.Type+"."+r.Name == address && len(r.Instances) > 0 {
			return r.Instances[0].Attributes[attr]
		}
	}
	return nil
}

// stringMap converts a JSON object of strings.
func stringMap(v any) map[string]string {
	m, _ := v.(map[string]any)
	out := make(map[string]string, len(m))
	for k, val := range m {
		s, _ := val.(string)
		out[k] = s
	}
	return out
}

// writeGate holds state writes (POST of a state, not of its lock) to chosen
// states, so a test can keep an apply in the middle, lock held, for as long
// as it needs.
type writeGate struct {
	mu      sync.Mutex
	path    string
	release chan struct{}
	blocked chan struct{}
	once    *sync.Once
}

// hold makes writes to states whose path ends in /<name> wait until the
// returned release is called; blocked is closed when the first one waits.
func (g *writeGate) hold(name string) (blocked <-chan struct{}, release func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.path = "/terraform/state/" + name
	g.release = make(chan struct{})
	g.blocked = make(chan struct{})
	g.once = &sync.Once{}
	rel := g.release
	var releaseOnce sync.Once
	return g.blocked, func() {
		releaseOnce.Do(func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			close(rel)
			g.path = ""
		})
	}
}

func (g *writeGate) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			g.mu.Lock()
			held := g.path != "" && strings.HasSuffix(r.URL.Path, g.path)
			release, blocked, once := g.release, g.blocked, g.once
			g.mu.Unlock()
			if held {
				once.Do(func() { close(blocked) })
				select {
				case <-release:
				case <-r.Context().Done():
					return
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// testContext ends a minute before the test binary's deadline, so a stuck
// CLI fails the test with its log instead of killing the binary.
func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx := context.Background()
	if deadline, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline.Add(-time.Minute))
		t.Cleanup(cancel)
	}
	return ctx
}

func randomHex(n int) string {
	buf := make([]byte, n)
	if _, err := rand.Read(buf); err != nil {
		panic(err)
	}
	return hex.EncodeToString(buf)
}

func errText(err error) string {
	if err == nil {
		return "succeeded"
	}
	var exit interface{ ExitCode() int }
	if errors.As(err, &exit) {
		return fmt.Sprintf("failed, exit code %d", exit.ExitCode())
	}
	return "failed: " + err.Error()
}

// pollUntil checks cond every second for up to three minutes.
func pollUntil(ctx context.Context, cond wait.ConditionWithContextFunc) error {
	return wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, cond)
}
