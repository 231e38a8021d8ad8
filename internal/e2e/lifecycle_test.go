package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlab"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlabstate"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// The example chart's objects, as keys of the release's manifests.
const (
	configMapKey  = "ConfigMap/app-content"
	deploymentKey = "Deployment.apps/app"
	serviceKey    = "Service/app"
	secretKey     = "Secret/app"
)

// valuesFile is the example's values.yaml with another message and extra lines.
func valuesFile(message, extra string) string {
	return fmt.Sprintf("message: %q\nreplicaCount: 1\n%s", message, extra)
}

// A merge request's whole life: the first pipeline plans and deploys the review app, a second
// commit changes one value and its plan shows exactly that, and after the merge deleted the
// branch the stop job destroys the environment from the deploy job's artifacts alone.
func TestPipeline_reviewAppLifecycle(t *testing.T) {
	h := setup(t)
	h.forEachCLI(t, func(t *testing.T, cli CLI) {
		ctx := testContext(t)
		app := newReviewApp(t, h, cli, "life")
		var logs []string

		// First pipeline: everything is new. The merge request pipeline runs what the workflow
		// and the rules select: not the production jobs, and the stop job only when played.
		first := app.pipeline(app.commit(valuesFile("Hello from the first commit", "")))
		run1 := app.runPipeline(ctx, first, "validate", "plan", "deploy_review")
		plan1, deploy1 := run1.Job("plan"), run1.Job("deploy_review")
		logs = append(logs, plan1.Log, deploy1.Log)
		app.checkInstalledFromMirror(plan1)
		checkReport(t, plan1, widgetReport{Create: 2})
		created := app.planJSON(ctx, plan1)
		release := findChange(t, created, "gitlabk8s_release.app")
		if !slices.Equal(release.Change.Actions, []string{"create"}) {
			t.Errorf("first plan: release actions %v, want [create]", release.Change.Actions)
		}
		// Every object shows in the very first plan, the Secret's value as a hash only.
		manifests := stringMap(release.Change.After["manifests"])
		for _, key := range []string{configMapKey, deploymentKey, serviceKey, secretKey} {
			if manifests[key] == "" {
				t.Errorf("first plan: manifests lack %s (have %v, unknown: %v)", key, mapKeys(manifests), release.Change.AfterUnknown["manifests"])
			}
		}
		for key, text := range manifests {
			if strings.Contains(text, app.canary) {
				t.Errorf("first plan: manifest %s shows the sensitive api_key:\n%s", key, text)
			}
		}

		// The plan job posted its report on the merge request, and linked it as an artifact.
		notes := app.reportNotes()
		if len(notes) != 1 || notes[0].Body != app.jobFile(plan1, "gitlabk8s-plan.md") || !strings.Contains(notes[0].Body, "**app**: 5 objects added") {
			t.Errorf("first plan: the merge request's notes are %+v, want one: the report gitlabk8s-plan.md, with app's 5 objects added (the Ingress too)", notes)
		}

		ns := app.output(ctx, deploy1, "namespace")
		// The environment's URL, for GitLab's "View app": the Ingress of the review app's host.
		url := app.output(ctx, deploy1, "url")
		if env := app.jobFile(deploy1, "deploy.env"); env != "DYNAMIC_ENVIRONMENT_URL="+url+"\n" || !strings.HasSuffix(url, ".apps.example.com/") {
			t.Errorf("deploy.env = %q, want DYNAMIC_ENVIRONMENT_URL=<the review app's host under apps.example.com> (output url %q)", env, url)
		}
		if got := app.output(ctx, deploy1, "release_status"); got != "deployed" {
			t.Errorf("release_status after the first deploy = %q, want deployed", got)
		}
		// GitLab's Kubernetes dashboard of the environment shows the namespace the provider made.
		if agent, dashboardNS := app.environmentKubernetes(ctx, first, "deploy_review"); dashboardNS != ns || agent != h.cluster.AdminContext {
			t.Errorf("deploy_review's environment:kubernetes has agent %q and namespace %q, want agent %s and the provider's namespace %s", agent, dashboardNS, h.cluster.AdminContext, ns)
		}
		app.checkPage(ctx, ns, "Hello from the first commit")
		// Helm's record of the revision names the pipeline's user and merge request.
		ledger := fmt.Sprintf("owner=helm,name=app,%s=%s,%s=%s", gitlab.ReleaseLabelUser, gitlabUser, gitlab.ReleaseLabelMergeRequestIID, app.mergeRequestIID)
		records, err := h.kube.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: ledger})
		if err != nil {
			t.Fatal(err)
		}
		if len(records.Items) != 1 {
			t.Errorf("%d Helm records labelled %s, want the first revision's; the records are %s", len(records.Items), ledger, app.helmRecords(ctx, ns))
		}

		// Second commit: one value, one line of one object.
		second := app.pipeline(app.commit(valuesFile("Hello from the second commit", "")))
		run2 := app.runPipeline(ctx, second, "validate", "plan", "deploy_review")
		plan2, deploy2 := run2.Job("plan"), run2.Job("deploy_review")
		logs = append(logs, plan2.Log, deploy2.Log)
		checkReport(t, plan2, widgetReport{Update: 1})
		updated := app.planJSON(ctx, plan2)
		changed := updated.changed()
		if len(changed) != 1 || changed[0].Address != "gitlabk8s_release.app" || !slices.Equal(changed[0].Change.Actions, []string{"update"}) {
			t.Fatalf("second plan changes %s, want only gitlabk8s_release.app updated", describeChanges(changed))
		}
		diffs := manifest.DiffManifests(stringMap(changed[0].Change.Before["manifests"]), stringMap(changed[0].Change.After["manifests"]))
		if len(diffs) != 1 || diffs[0].Key != configMapKey || diffs[0].Action != manifest.ActionUpdate {
			t.Fatalf("second plan: manifest changes\n%s\nwant only %s updated", manifest.FormatChanges(diffs), configMapKey)
		}
		removed, added := changedLines(diffs[0].UnifiedDiff)
		if len(removed) != 1 || len(added) != 1 ||
			!strings.Contains(removed[0], "Hello from the first commit") || !strings.Contains(added[0], "Hello from the second commit") {
			t.Errorf("second plan: %s changes lines -%q +%q, want exactly the message line", configMapKey, removed, added)
		}
		// The job log is the review: it shows the changed line of the changed object.
		for _, want := range []string{configMapKey, "Hello from the first commit", "Hello from the second commit"} {
			if !strings.Contains(plan2.Log, want) {
				t.Errorf("second plan's job log lacks %q", want)
			}
		}
		if strings.Contains(plan2.Log, "nginx:1.27-alpine") {
			t.Errorf("second plan's job log shows the unchanged Deployment's image: the diff is not limited to the change")
		}
		// The second pipeline updated the note: the changed lines of the one object, nothing else.
		notes = app.reportNotes()
		if len(notes) != 1 || notes[0].Body != app.jobFile(plan2, "gitlabk8s-plan.md") {
			t.Fatalf("second plan: the merge request's notes are %+v, want the first one updated to the second report", notes)
		}
		for _, want := range []string{"**app**: 1 object changed", "<code>" + configMapKey + "</code> changed", "-    <p>Hello from the first commit</p>", "+    <p>Hello from the second commit</p>"} {
			if !strings.Contains(notes[0].Body, want) {
				t.Errorf("second plan's note lacks %q:\n%s", want, notes[0].Body)
			}
		}
		if strings.Contains(notes[0].Body, "nginx:1.27-alpine") || strings.Contains(notes[0].Body, app.canary) {
			t.Errorf("second plan's note shows an unchanged object or the sensitive api_key:\n%s", notes[0].Body)
		}

		app.checkPage(ctx, ns, "Hello from the second commit")

		// The merge: the default branch's pipeline plans and deploys production, and no review job.
		app.mergeToDefaultBranch(ctx, app.snapshots[len(app.snapshots)-1], "Hello from the second commit")

		// The merge deletes the branch; GitLab runs the on_stop job, which cannot check out.
		if ns != app.namespace() {
			t.Errorf("namespace %s, want the pipeline's %s", ns, app.namespace())
		}
		stop := app.stop(ctx, second)
		logs = append(logs, stop.Log)

		// GitLab marks the environment stopped; the scheduled janitor, on the default branch with
		// its protected token, deletes the emptied state.
		if _, err := h.state.PutEnvironment("review/"+refSlug(app.branch), "review-"+refSlug(app.branch), gitlabstate.EnvironmentStopped); err != nil {
			t.Fatal(err)
		}
		janitor := runStateJanitor(t, app.runner.Project, h.deleteToken, map[string]string{"STATE_MIN_AGE_HOURS": "0"})
		// Its outcome also reports other tests' states; this state's deletion is what counts here.
		t.Logf("delete_stale_states: %s", errText(janitor.Err))
		if _, ok := h.state.State(app.stateName()); ok {
			t.Errorf("state %s still exists after the janitor ran", app.stateName())
		}
		if want := "Deleted the Terraform state " + app.stateName() + ":"; !strings.Contains(janitor.Log, want) {
			t.Errorf("the janitor's log lacks %q", want)
		}

		for _, log := range logs {
			if strings.Contains(log, app.canary) {
				t.Errorf("a job log shows the sensitive api_key:\n%s", log)
			}
		}
	})
}

// Two deploys on one state at once: the second fails on GitLab's lock, naming the lock held,
// and the state is the first one's result, whole.
func TestPipeline_concurrentDeploysMeetTheLock(t *testing.T) {
	h := setup(t)
	h.forEachCLI(t, func(t *testing.T, cli CLI) {
		ctx := testContext(t)
		app := newReviewApp(t, h, cli, "lock")
		// This one's stop job deletes the state itself, the documented opt-in.
		app.deleteStateInStopJob()

		first := app.pipeline(app.commit(valuesFile("one", "")))
		app.mustRun(ctx, first, "plan")
		deploy1 := app.mustRun(ctx, first, "deploy_review")
		ns := app.output(ctx, deploy1, "namespace")
		before, _ := app.storedState()

		// Two pushes in quick succession: both pipelines plan against the same state.
		second := app.pipeline(app.commit(valuesFile("two", "")))
		app.mustRun(ctx, second, "plan")
		third := app.pipeline(app.commit(valuesFile("three", "")))
		app.mustRun(ctx, third, "plan")

		// The second pipeline's deploy holds the lock while it writes the state.
		blocked, release := h.gate.hold(app.stateName())
		defer release()
		holder, err := second.Start(ctx, "deploy_review")
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-blocked:
		case <-holder.Done():
			res := holder.Wait()
			app.logJob(res)
			t.Fatalf("the second pipeline's deploy ended before writing its state: %v", res.Err)
		case <-ctx.Done():
			t.Fatalf("the second pipeline's deploy never wrote its state:\n%s", holder.Log())
		}
		_, held := app.storedState()
		if held.Lock == nil {
			t.Fatal("a deploy is writing its state, but the state is not locked")
		}

		contender, err := third.Start(ctx, "deploy_review")
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-contender.Done():
		case <-ctx.Done():
			t.Fatalf("the third pipeline's deploy neither failed nor finished:\n%s", contender.Log())
		}
		lost := contender.Wait()
		app.logJob(lost)
		if lost.Err == nil {
			t.Fatal("the third pipeline's deploy succeeded while the second held the state lock")
		}
		for _, want := range []string{"Error acquiring the state lock", held.Lock.ID} {
			if !strings.Contains(lost.Log, want) {
				t.Errorf("the losing deploy's log lacks %q", want)
			}
		}

		release()
		won := holder.Wait()
		app.logJob(won)
		if won.Err != nil {
			t.Fatalf("the deploy holding the lock failed: %v", won.Err)
		}

		after, raw := app.storedState()
		if raw.Lock != nil {
			t.Errorf("state still locked after both deploys: %+v", raw.Lock)
		}
		if after.Lineage != before.Lineage || after.Serial <= before.Serial {
			t.Errorf("state lineage %s serial %d after, %s serial %d before: want the same lineage, a later serial", after.Lineage, after.Serial, before.Lineage, before.Serial)
		}
		if managed := after.managed(); len(managed) != 2 {
			t.Errorf("state holds %v, want the environment and the release", managed)
		}
		stored := stringMap(after.attribute("gitlabk8s_release.app", "manifests"))[configMapKey]
		if !strings.Contains(stored, "two") || strings.Contains(stored, "three") {
			t.Errorf("state's %s = %q, want the lock holder's message \"two\" only", configMapKey, stored)
		}
		app.checkPage(ctx, ns, "two")
		app.stop(ctx, second)
	})
}

// A deploy killed with SIGKILL while the release waits for its rollout leaves the state locked
// and the release pending. Once the lock is released the way GitLab's force-unlock does, the
// next pipeline converges: same namespace, release deployed, nothing left to change.
func TestPipeline_killedDeployRecovers(t *testing.T) {
	h := setup(t)
	h.forEachCLI(t, func(t *testing.T, cli CLI) {
		ctx := testContext(t)
		app := newReviewApp(t, h, cli, "kill")
		app.deleteStateInStopJob()

		first := app.pipeline(app.commit(valuesFile("one", "")))
		app.mustRun(ctx, first, "plan")
		deploy1 := app.mustRun(ctx, first, "deploy_review")
		ns := app.output(ctx, deploy1, "namespace")
		nsBefore, err := h.kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}

		// A commit whose rollout cannot finish: no node has the selected label.
		pool := "e2e-" + randomHex(4)
		second := app.pipeline(app.commit(valuesFile("two", fmt.Sprintf("nodeSelector:\n  gitlabk8s.test/pool: %q\n", pool))))
		app.mustRun(ctx, second, "plan")
		killed, err := second.Start(ctx, "deploy_review")
		if err != nil {
			t.Fatal(err)
		}
		if err := app.waitForRollout(ctx, ns, killed, pool); err != nil {
			t.Fatal(err)
		}
		if err := killed.Kill(); err != nil {
			t.Fatal(err)
		}
		res := killed.Wait()
		app.logJob(res)
		if res.Err == nil {
			t.Fatal("the killed deploy succeeded")
		}
		t.Logf("Helm release records at the kill: %s", app.helmRecords(ctx, ns))

		_, raw := app.storedState()
		if raw.Lock == nil {
			t.Fatal("the killed deploy left no lock: nothing to recover from")
		}
		// What a maintainer runs, or GitLab's Unlock button does: release the lock by its ID.
		out, err := res.Exec(ctx, cli.Path, "force-unlock", "-force", raw.Lock.ID)
		if err != nil {
			t.Fatalf("%s force-unlock: %v\n%s", cli.Name, err, out)
		}
		if _, raw := app.storedState(); raw.Lock != nil {
			t.Fatalf("state still locked after force-unlock: %+v", raw.Lock)
		}

		// The next pipeline: the fix, keeping the killed commit's message.
		third := app.pipeline(app.commit(valuesFile("two", "")))
		app.mustRun(ctx, third, "plan")
		deploy3 := app.mustRun(ctx, third, "deploy_review")
		if got := app.output(ctx, deploy3, "release_status"); got != "deployed" {
			t.Errorf("release_status after recovery = %q, want deployed", got)
		}
		app.checkPage(ctx, ns, "two")
		nsAfter, err := h.kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("namespace after recovery: %v", err)
		}
		if nsAfter.UID != nsBefore.UID {
			t.Errorf("namespace %s was recreated (uid %s, was %s)", ns, nsAfter.UID, nsBefore.UID)
		}
		dep, err := h.kube.AppsV1().Deployments(ns).Get(ctx, "app", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("Deployment after recovery: %v", err)
		}
		if sel := dep.Spec.Template.Spec.NodeSelector; len(sel) != 0 {
			t.Errorf("Deployment after recovery selects nodes %v, want none", sel)
		}
		// Converged: a fresh plan in the deploy job's folder has nothing to do.
		out, err = deploy3.Exec(ctx, cli.Path, "plan", "-input=false", "-detailed-exitcode", "-no-color")
		if err != nil {
			t.Errorf("plan after recovery is not empty (%v):\n%s", err, out)
		}
		if st, _ := app.storedState(); len(st.managed()) != 2 {
			t.Errorf("state after recovery holds %v, want the environment and the release", st.managed())
		}
		app.stop(ctx, third)
	})
}

// mergeToDefaultBranch runs the default branch's pipeline on the merged commit: it must run
// validate, plan_production and deploy_production, and production must serve message. Production
// is then destroyed, so the next run starts from an empty state.
func (a *reviewApp) mergeToDefaultBranch(ctx context.Context, checkout, message string) {
	a.t.Helper()
	ns := "production-" + projectID
	a.t.Cleanup(func() { a.deleteNamespace(ns) })
	p, err := a.runner.NewPipeline(PipelineOptions{Source: "push", Ref: a.runner.Project.DefaultBranch, Checkout: checkout})
	if err != nil {
		a.t.Fatal(err)
	}
	run := a.runPipeline(ctx, p, "validate", "plan_production", "deploy_production")
	checkReport(a.t, run.Job("plan_production"), widgetReport{Create: 2})
	deploy := run.Job("deploy_production")
	if got := a.output(ctx, deploy, "namespace"); got != ns {
		a.t.Errorf("production's namespace = %q, want %s", got, ns)
	}
	a.checkPage(ctx, ns, message)
	if out, err := deploy.Exec(ctx, a.cli.Path, "destroy", "-input=false", "-auto-approve"); err != nil {
		a.t.Fatalf("destroy production: %v\n%s", err, out)
	}
	if err := a.namespaceGone(ctx, ns); err != nil {
		a.t.Errorf("namespace %s still exists after destroying production: %v", ns, err)
	}
}

// environmentKubernetes returns the job's environment:kubernetes agent and
// dashboard namespace as GitLab expands them for the environment's dashboard:
// with the job's variables but, as GitLab documents, none of CI_ENVIRONMENT_*.
func (a *reviewApp) environmentKubernetes(ctx context.Context, p *Pipeline, job string) (agent, namespace string) {
	a.t.Helper()
	resolved, _, err := p.Preview(job)
	if err != nil {
		a.t.Fatal(err)
	}
	env, _ := resolved["environment"].(map[string]any)
	k, _ := env["kubernetes"].(map[string]any)
	dashboard, _ := k["dashboard"].(map[string]any)
	rawAgent, _ := k["agent"].(string)
	rawNamespace, _ := dashboard["namespace"].(string)
	if rawAgent == "" || rawNamespace == "" {
		a.t.Fatalf("%s's environment:kubernetes lacks agent or dashboard:namespace: %v", job, k)
	}
	expanded, err := p.ExpandInJob(ctx, job, rawAgent, rawNamespace)
	if err != nil {
		a.t.Fatal(err)
	}
	return expanded[0], expanded[1]
}

// checkInstalledFromMirror checks that init installed the provider built from this checkout as
// it installs a published one, and locked it.
func (a *reviewApp) checkInstalledFromMirror(res *JobResult) {
	a.t.Helper()
	if want := "gitlabk8s/gitlabk8s v" + ProviderVersion; !strings.Contains(res.Log, want) {
		a.t.Errorf("init did not install %s:\n%s", want, res.Log)
	}
	lock, err := os.ReadFile(filepath.Join(res.Dir, ".terraform.lock.hcl"))
	if err != nil {
		a.t.Fatalf("init wrote no dependency lock file: %v", err)
	}
	if want := fmt.Sprintf("version = %q", ProviderVersion); !strings.Contains(string(lock), want) {
		a.t.Errorf(".terraform.lock.hcl lacks %s:\n%s", want, lock)
	}
}

// checkPage checks what the application serves: the ConfigMap its pods mount.
func (a *reviewApp) checkPage(ctx context.Context, ns, message string) {
	a.t.Helper()
	cm, err := a.h.kube.CoreV1().ConfigMaps(ns).Get(ctx, "app-content", metav1.GetOptions{})
	if err != nil {
		a.t.Fatalf("ConfigMap %s/app-content: %v", ns, err)
	}
	if page := cm.Data["index.html"]; !strings.Contains(page, "<p>"+message+"</p>") {
		a.t.Errorf("the application serves %q, want the message %q", page, message)
	}
}

// waitForRollout waits until the deploy has updated the Deployment with the
// node selector: Helm's upgrade is then under way, waiting for pods that cannot
// be scheduled.
func (a *reviewApp) waitForRollout(ctx context.Context, ns string, job *RunningJob, pool string) error {
	return pollUntil(ctx, func(ctx context.Context) (bool, error) {
		select {
		case <-job.Done():
			res := job.Wait()
			a.logJob(res)
			return false, fmt.Errorf("the deploy ended (%s) before its rollout started", errText(res.Err))
		default:
		}
		dep, err := a.h.kube.AppsV1().Deployments(ns).Get(ctx, "app", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		return dep.Spec.Template.Spec.NodeSelector["gitlabk8s.test/pool"] == pool, nil
	})
}

// helmRecords describes the release's Helm records (Secrets of Helm's storage driver).
func (a *reviewApp) helmRecords(ctx context.Context, ns string) string {
	secrets, err := a.h.kube.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: "owner=helm"})
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, s := range secrets.Items {
		out = append(out, fmt.Sprintf("v%s %s", s.Labels["version"], s.Labels["status"]))
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// widgetReport is the terraform report GitLab's merge-request widget reads.
type widgetReport struct {
	Create int `json:"create"`
	Update int `json:"update"`
	Delete int `json:"delete"`
}

func checkReport(t *testing.T, res *JobResult, want widgetReport) {
	t.Helper()
	if res.Report == "" {
		t.Fatalf("job %s published no terraform report", res.Name)
	}
	data, err := os.ReadFile(res.Report)
	if err != nil {
		t.Fatal(err)
	}
	var got widgetReport
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("terraform report %q is not the widget's format: %v", data, err)
	}
	if got != want {
		t.Errorf("terraform report = %+v, want %+v", got, want)
	}
}

func findChange(t *testing.T, p *plan, address string) resourceChange {
	t.Helper()
	for _, rc := range p.ResourceChanges {
		if rc.Address == address {
			return rc
		}
	}
	t.Fatalf("plan has no change for %s: %s", address, describeChanges(p.ResourceChanges))
	return resourceChange{}
}

func describeChanges(changes []resourceChange) string {
	if len(changes) == 0 {
		return "nothing"
	}
	var parts []string
	for _, rc := range changes {
		parts = append(parts, fmt.Sprintf("%s %v", rc.Address, rc.Change.Actions))
	}
	return strings.Join(parts, ", ")
}

// changedLines returns the removed and added lines of a unified diff.
func changedLines(diff string) (removed, added []string) {
	for _, line := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(line, "---"), strings.HasPrefix(line, "+++"):
		case strings.HasPrefix(line, "-"):
			removed = append(removed, line[1:])
		case strings.HasPrefix(line, "+"):
			added = append(added, line[1:])
		}
	}
	return removed, added
}

func mapKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
