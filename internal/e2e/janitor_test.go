package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlab"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlabstate"
)

// The sweep's cast, per CLI: leftovers of both kinds (stopped or gone in GitLab), live
// environments of both kinds, and namespaces that are not the project's at all.
const (
	markedLeftovers     = 25
	historicalLeftovers = 25
	liveEnvironments    = 5
	// GitLab keeps environments whose namespaces are long gone; enough of them that the
	// environments API answers in several pages.
	namespacelessEnvironments = 150
)

// janitorProject is a GitLab project of its own for each run, so the sweep can never find
// another test's (or another run's) namespaces.
type janitorProject struct {
	id, path, pathSlug string
	gitlab             *gitlabstate.Server
	apiURL, jobToken   string
}

func newJanitorProject(t *testing.T) *janitorProject {
	t.Helper()
	p := &janitorProject{
		id:       fmt.Sprint(700000 + rand.IntN(200000)),
		path:     "gitlabk8s/janitor-" + randomHex(3),
		jobToken: randomHex(16),
	}
	p.pathSlug = refSlug(p.path)
	p.gitlab = gitlabstate.New(gitlabstate.Config{ProjectID: p.id, ProjectPath: p.path,
		Users: []gitlabstate.User{{Username: "janitor", JobToken: p.jobToken}}})
	server := httptest.NewServer(p.gitlab)
	t.Cleanup(server.Close)
	p.apiURL = server.URL + "/api/v4"
	return p
}

// sweepCase is one namespace of the scenario and what the sweep must do with it.
type sweepCase struct {
	ns    *corev1.Namespace
	swept bool
}

// sweepCast creates GitLab's environments and the cluster's namespaces.
func (p *janitorProject) sweepCast(t *testing.T, h *harness) []sweepCase {
	t.Helper()
	var cases []sweepCase
	put := func(name, slug, state string) {
		if _, err := p.gitlab.PutEnvironment(name, slug, state); err != nil {
			t.Fatal(err)
		}
	}
	marked := func(envName string) *corev1.Namespace {
		slug := gitlab.EnvironmentSlug(envName)
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name:        gitlab.DefaultNamespace(p.pathSlug, p.id, slug),
			Labels:      gitlab.OwnershipLabels(slug),
			Annotations: gitlab.OwnershipAnnotations(envName, slug, p.pathSlug),
		}}
	}
	// Historical slugs carry the random suffix older GitLab versions gave them.
	historical := func(slug string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: gitlab.DefaultNamespace(p.pathSlug, p.id, slug)}}
	}
	for i := range markedLeftovers {
		env := fmt.Sprintf("review/left-%02d", i)
		if i%2 == 0 { // the others were deleted in GitLab
			put(env, gitlab.EnvironmentSlug(env), gitlabstate.EnvironmentStopped)
		}
		cases = append(cases, sweepCase{ns: marked(env), swept: true})
	}
	for i := range historicalLeftovers {
		slug := fmt.Sprintf("review-old-%02d-%s", i, randomHex(3))
		if i%2 == 0 {
			put(fmt.Sprintf("review/old-%02d", i), slug, gitlabstate.EnvironmentStopped)
		}
		cases = append(cases, sweepCase{ns: historical(slug), swept: true})
	}
	for i := range liveEnvironments {
		env := fmt.Sprintf("review/live-%d", i)
		ns := marked(env)
		if i >= 3 {
			ns = historical(fmt.Sprintf("review-live-%d-%s", i, randomHex(3)))
			put(env, strings.TrimPrefix(ns.Name, p.pathSlug+"-"+p.id+"-"), gitlabstate.EnvironmentAvailable)
		} else {
			put(env, gitlab.EnvironmentSlug(env), gitlabstate.EnvironmentAvailable)
		}
		cases = append(cases, sweepCase{ns: ns})
	}
	unrelated := "janitor-unrelated-" + randomHex(3)
	otherProject := marked("review/left-00")
	otherProject.Name, otherProject.Annotations[gitlab.AnnotationGitLabApp] = unrelated+"-other-project", "another-project"
	cases = append(cases,
		sweepCase{ns: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: unrelated}}},
		// The project's path slug and a slug, but not its ID: not a name GitLab gave.
		sweepCase{ns: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: p.pathSlug + "-review-old-00-abcdef"}}},
		sweepCase{ns: otherProject},
	)
	for i := range namespacelessEnvironments {
		put(fmt.Sprintf("review/merged-long-ago-%03d", i), fmt.Sprintf("review-merged-long-ago-%03d", i), gitlabstate.EnvironmentStopped)
	}
	createAll(t, h, cases)
	return cases
}

// createAll creates the namespaces in parallel and deletes them when the test ends.
func createAll(t *testing.T, h *harness, cases []sweepCase) {
	t.Helper()
	ctx := testContext(t)
	var wg sync.WaitGroup
	errs := make(chan error, len(cases))
	for i := range cases {
		wg.Add(1)
		go func(c *sweepCase) {
			defer wg.Done()
			created, err := h.kube.CoreV1().Namespaces().Create(ctx, c.ns, metav1.CreateOptions{})
			if err != nil {
				errs <- err
				return
			}
			c.ns = created
		}(&cases[i])
	}
	wg.Wait()
	close(errs)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, c := range cases {
			if err := h.kube.CoreV1().Namespaces().Delete(ctx, c.ns.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Logf("cleanup: delete namespace %s: %v", c.ns.Name, err)
			}
		}
	})
	for err := range errs {
		t.Fatal(err)
	}
}

func janitorDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "examples", "janitor"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// janitorIdentity is a ServiceAccount with the ClusterRole of examples/janitor/rbac.yaml and
// nothing else, and a kubeconfig whose context "janitor" uses it.
func janitorIdentity(t *testing.T, h *harness) (kubeconfig, contextName string) {
	t.Helper()
	ctx := testContext(t)
	data, err := os.ReadFile(filepath.Join(janitorDir(t), "rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var probe metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &probe); err != nil {
			t.Fatal(err)
		}
		if probe.Kind == "ClusterRole" {
			if err := yaml.Unmarshal([]byte(doc), &role); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(role.Rules) == 0 {
		t.Fatal("examples/janitor/rbac.yaml holds no ClusterRole with rules")
	}
	suffix := randomHex(3)
	ns := "janitor-identity-" + suffix
	role.ObjectMeta = metav1.ObjectMeta{Name: role.Name + "-" + suffix}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "janitor", Namespace: ns}},
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = h.kube.RbacV1().ClusterRoleBindings().Delete(ctx, binding.Name, metav1.DeleteOptions{})
		_ = h.kube.RbacV1().ClusterRoles().Delete(ctx, role.Name, metav1.DeleteOptions{})
		_ = h.kube.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	})
	if _, err := h.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "janitor"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.kube.RbacV1().ClusterRoles().Create(ctx, &role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expiry := int64(3600)
	token, err := h.kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "janitor",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	admin, err := h.cluster.RESTConfig(h.cluster.AdminContext)
	if err != nil {
		t.Fatal(err)
	}
	ca := admin.CAData
	if len(ca) == 0 && admin.CAFile != "" {
		if ca, err = os.ReadFile(admin.CAFile); err != nil {
			t.Fatal(err)
		}
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: admin.Host, CertificateAuthorityData: ca}
	cfg.AuthInfos["janitor"] = &clientcmdapi.AuthInfo{Token: token.Status.Token}
	cfg.Contexts["janitor"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "janitor"}
	cfg.CurrentContext = "janitor"
	kubeconfig = filepath.Join(t.TempDir(), "janitor.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	return kubeconfig, "janitor"
}

func janitorRunner(t *testing.T, h *harness, cli CLI, p *janitorProject) (*Runner, string) {
	t.Helper()
	dir := janitorDir(t)
	kubeconfig, kubeContext := janitorIdentity(t, h)
	checkout := t.TempDir()
	if err := copyTree(dir, checkout); err != nil {
		t.Fatal(err)
	}
	return &Runner{
		Command: h.gitlabCILocal,
		Project: Project{ID: p.id, Path: p.path, ServerURL: "https://gitlab.example.com",
			APIURL: p.apiURL, JobToken: p.jobToken, DefaultBranch: "main"},
		// A pipeline schedule's variables; the fresh namespaces of the test are old enough.
		Variables: map[string]string{
			"SWEEP_NAMESPACES":     "true",
			"TF_BIN":               cli.Path,
			"TF_VAR_kube_context":  kubeContext,
			"TF_VAR_min_age_hours": "0",
		},
		Masked: []string{p.jobToken},
		Env: map[string]string{
			"PATH":               os.Getenv("PATH"),
			"HOME":               t.TempDir(),
			"TMPDIR":             os.TempDir(),
			"KUBECONFIG":         kubeconfig,
			"TF_CLI_CONFIG_FILE": h.cliConfig,
			"CHECKPOINT_DISABLE": "1",
		},
		WorkDir: t.TempDir(),
	}, checkout
}

// The scheduled janitor sweeps exactly the project's leftovers: 50 namespaces whose environments
// GitLab stopped or deleted, half marked by the provider, half with GitLab's historical names, go;
// the 5 live environments' namespaces and 3 namespaces that are not the project's stay, untouched.
// It runs with the rights of examples/janitor/rbac.yaml alone.
func TestPipeline_janitorSweepsExactlyTheLeftovers(t *testing.T) {
	h := setup(t)
	h.forEachCLI(t, func(t *testing.T, cli CLI) {
		ctx := testContext(t)
		p := newJanitorProject(t)
		cases := p.sweepCast(t, h)
		runner, checkout := janitorRunner(t, h, cli, p)

		start := time.Now()
		res := runSweep(ctx, t, runner, checkout)
		t.Logf("the sweep took %s", time.Since(start).Round(time.Second))
		leftovers := markedLeftovers + historicalLeftovers
		for _, want := range []string{
			fmt.Sprintf("Plan: %d to import, 0 to add, %d to change, 0 to destroy.", leftovers, leftovers),
			fmt.Sprintf("%d destroyed", leftovers),
		} {
			if !strings.Contains(res.Log, want) {
				t.Errorf("the job log lacks %q", want)
			}
		}
		if strings.Contains(res.Log, p.jobToken) {
			t.Error("the job log shows the job token")
		}

		var swept, kept int
		for _, c := range cases {
			live, err := h.kube.CoreV1().Namespaces().Get(ctx, c.ns.Name, metav1.GetOptions{})
			switch {
			case c.swept && !apierrors.IsNotFound(err):
				t.Errorf("leftover %s is still there (err %v)", c.ns.Name, err)
			case c.swept:
				swept++
			case err != nil:
				t.Errorf("namespace %s, which is not a leftover, is gone: %v", c.ns.Name, err)
			default:
				kept++
				checkUntouched(t, c.ns, live)
			}
		}
		if swept != leftovers || kept != liveEnvironments+3 {
			t.Errorf("swept %d and kept %d namespaces, want %d and %d", swept, kept, leftovers, liveEnvironments+3)
		}

		// The next night finds nothing to do.
		again := runSweep(ctx, t, runner, checkout)
		if !strings.Contains(again.Log, "leftovers = {}") || !strings.Contains(again.Log, "Resources: 0 destroyed.") || strings.Contains(again.Log, "to import") {
			t.Errorf("a second sweep did something:\n%s", again.Log)
		}
	})
}

func runSweep(ctx context.Context, t *testing.T, runner *Runner, checkout string) *JobResult {
	t.Helper()
	res := runScheduled(ctx, t, runner, checkout, "sweep_namespaces")
	if res.Err != nil {
		t.Fatalf("sweep_namespaces failed: %v", res.Err)
	}
	return res
}

// runScheduled runs a scheduled pipeline of the default branch, which must run the one job named,
// and returns that job's result, its log without colors.
func runScheduled(ctx context.Context, t *testing.T, runner *Runner, checkout, job string) *JobResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, jobTimeout)
	defer cancel()
	p, err := runner.NewPipeline(PipelineOptions{Source: "schedule", Ref: runner.Project.DefaultBranch, Checkout: checkout})
	if err != nil {
		t.Fatal(err)
	}
	run, err := p.RunPipeline(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := run.Names(); !slices.Equal(got, []string{job}) {
		t.Fatalf("the scheduled pipeline ran %v, want [%s]:\n%s", got, job, run.Output)
	}
	res := run.Job(job)
	if res.Err == nil {
		res.Err = run.Err
	}
	res.Log = plainLog(res.Log)
	t.Logf("---- job %s (%s, %s) ----\n%s", res.Name, res.Duration.Round(time.Second), errText(res.Err), res.Log)
	return res
}

// checkUntouched fails when a namespace that must stay was changed: another UID, or labels and
// annotations other than it was created with (an adoption would have written the marker).
func checkUntouched(t *testing.T, created, live *corev1.Namespace) {
	t.Helper()
	if live.UID != created.UID || live.DeletionTimestamp != nil {
		t.Errorf("namespace %s: UID %s (was %s), deletion %v", live.Name, live.UID, created.UID, live.DeletionTimestamp)
	}
	for _, m := range []struct{ before, after map[string]string }{{created.Labels, live.Labels}, {created.Annotations, live.Annotations}} {
		for k, v := range m.after {
			if m.before[k] != v && k != corev1.LabelMetadataName {
				t.Errorf("namespace %s: %s=%q was written by the sweep", live.Name, k, v)
			}
		}
	}
}
