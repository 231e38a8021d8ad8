package provider

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chartserver"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/release"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/testcluster"
)

// checksApplied is a release of the checks chart that does not wait, so steps stay short.
func checksApplied(namespace, set string) string {
	return strings.Replace(checksRelease(namespace, set), "  set ", "  wait      = false\n  set ", 1)
}

// A change to a field that cannot change once set fails the plan, naming the object and the
// field and the way out (force_replace), instead of failing the apply after merge. With
// force_replace the apply replaces each such object, and the next plan is empty.
func TestAccRelease_dryRunRefusesImmutableChanges(t *testing.T) {
	e := testAccRelease(t)
	// An address of the local cluster's service range (10.96.0.0/16), away from the low ones it allocates.
	clusterIP := fmt.Sprintf("10.96.%d.%d", 200+rand.IntN(50), 1+rand.IntN(250))
	changed := fmt.Sprintf(`"workloads" = "true", "migrateCommand" = "migrate-again", "storageSize" = "2Gi", "selector" = "web-v2", "clusterIP" = %q`, clusterIP)
	forced := strings.Replace(checksApplied(e.namespace, changed), "  wait ", "  force_replace = true\n  wait ", 1)
	uids := map[string]types.UID{}
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: checksApplied(e.namespace, `"workloads" = "true"`),
				Check:  func(*terraform.State) error { return checksObjectUIDs(e, uids) },
			},
			{
				Config:      checksApplied(e.namespace, `"workloads" = "true", "migrateCommand" = "migrate-again"`),
				PlanOnly:    true,
				ExpectError: wrappedPattern(`(?s)Immutable Field Changed.*Job.batch/checks-migrate.*changes spec.template.*force_replace = true.*field is immutable`),
			},
			{
				Config:      checksApplied(e.namespace, `"workloads" = "true", "storageSize" = "2Gi"`),
				PlanOnly:    true,
				ExpectError: wrappedPattern(`(?s)Immutable Field Changed.*StatefulSet.apps/checks-db.*changes spec.*force_replace = true.*spec.volumeClaimTemplates`),
			},
			{
				Config:      checksApplied(e.namespace, `"workloads" = "true", "selector" = "web-v2"`),
				PlanOnly:    true,
				ExpectError: wrappedPattern(`(?s)Immutable Field Changed.*Deployment.apps/checks \(from checks/templates/deployment.yaml\).*spec.selector.*force_replace`),
			},
			{
				Config:      checksApplied(e.namespace, fmt.Sprintf(`"workloads" = "true", "clusterIP" = %q`, clusterIP)),
				PlanOnly:    true,
				ExpectError: wrappedPattern(`(?s)Immutable Field Changed.*Service/checks.*changes spec.clusterIPs\[0\].*force_replace = true`),
			},
			{
				// force_replace: the apply deletes the four objects and Helm creates them with the changes.
				Config: forced,
				Check: func(*terraform.State) error {
					return checksReplaced(e, uids, clusterIP)
				},
			},
			{
				// What was applied is what the chart renders: nothing left to change.
				Config:   forced,
				PlanOnly: true,
			},
		},
	})
}

// checksObjectUIDs records the UIDs of the checks chart's Deployment, Service, Job and StatefulSet.
func checksObjectUIDs(e *releaseTestEnv, uids map[string]types.UID) error {
	ctx := context.Background()
	d, err := e.kube.AppsV1().Deployments(e.namespace).Get(ctx, "checks", metav1.GetOptions{})
	if err != nil {
		return err
	}
	s, err := e.kube.CoreV1().Services(e.namespace).Get(ctx, "checks", metav1.GetOptions{})
	if err != nil {
		return err
	}
	j, err := e.kube.BatchV1().Jobs(e.namespace).Get(ctx, "checks-migrate", metav1.GetOptions{})
	if err != nil {
		return err
	}
	ss, err := e.kube.AppsV1().StatefulSets(e.namespace).Get(ctx, "checks-db", metav1.GetOptions{})
	if err != nil {
		return err
	}
	uids["Deployment"], uids["Service"], uids["Job"], uids["StatefulSet"] = d.UID, s.UID, j.UID, ss.UID
	return nil
}

// checksReplaced checks that each object recorded in uids is a new one carrying the change.
func checksReplaced(e *releaseTestEnv, uids map[string]types.UID, clusterIP string) error {
	ctx := context.Background()
	before := map[string]types.UID{}
	for k, v := range uids {
		before[k] = v
	}
	if err := checksObjectUIDs(e, uids); err != nil {
		return err
	}
	for kind, uid := range before {
		if uids[kind] == uid {
			return fmt.Errorf("the %s was not replaced (same UID %s)", kind, uid)
		}
	}
	d, err := e.kube.AppsV1().Deployments(e.namespace).Get(ctx, "checks", metav1.GetOptions{})
	if err != nil {
		return err
	}
	if got := d.Spec.Selector.MatchLabels["app"]; got != "web-v2" {
		return fmt.Errorf("selector app = %q, want web-v2", got)
	}
	s, err := e.kube.CoreV1().Services(e.namespace).Get(ctx, "checks", metav1.GetOptions{})
	if err != nil {
		return err
	}
	if s.Spec.ClusterIP != clusterIP {
		return fmt.Errorf("clusterIP = %q, want %s", s.Spec.ClusterIP, clusterIP)
	}
	j, err := e.kube.BatchV1().Jobs(e.namespace).Get(ctx, "checks-migrate", metav1.GetOptions{})
	if err != nil {
		return err
	}
	if got := j.Spec.Template.Spec.Containers[0].Args; len(got) != 1 || got[0] != "migrate-again" {
		return fmt.Errorf("job args = %q, want [migrate-again]", got)
	}
	ss, err := e.kube.AppsV1().StatefulSets(e.namespace).Get(ctx, "checks-db", metav1.GetOptions{})
	if err != nil {
		return err
	}
	if got := ss.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests.Storage().String(); got != "2Gi" {
		return fmt.Errorf("volumeClaimTemplates storage = %s, want 2Gi", got)
	}
	return nil
}

// What admission refuses in the environment's namespace (ResourceQuota, Pod Security) fails
// the plan.
func TestAccRelease_dryRunRefusesWhatAdmissionRefuses(t *testing.T) {
	e := testAccRelease(t)
	ctx := context.Background()
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					quota := &corev1.ResourceQuota{
						ObjectMeta: metav1.ObjectMeta{Name: "no-services"},
						Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceServices: apiresource.MustParse("0")}},
					}
					if _, err := e.kube.CoreV1().ResourceQuotas(e.namespace).Create(ctx, quota, metav1.CreateOptions{}); err != nil {
						t.Fatal(err)
					}
					// Admission enforces a quota once the controller has recorded its usage.
					err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
						q, err := e.kube.CoreV1().ResourceQuotas(e.namespace).Get(ctx, quota.Name, metav1.GetOptions{})
						return err == nil && len(q.Status.Used) > 0, err
					})
					if err != nil {
						t.Fatalf("quota usage never recorded: %v", err)
					}
				},
				Config:      checksApplied(e.namespace, ``),
				PlanOnly:    true,
				ExpectError: wrappedPattern(`(?s)Object Refused by the API Server.*a ResourceQuota of the namespace refused a server-side dry run of Service/checks.*exceeded quota: no-services`),
			},
			{
				// plan_checks = "offline" does not ask the cluster.
				Config:             strings.Replace(checksApplied(e.namespace, ``), "  wait ", "  plan_checks = \"offline\"\n  wait ", 1),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				PreConfig: func() {
					if err := e.kube.CoreV1().ResourceQuotas(e.namespace).Delete(ctx, "no-services", metav1.DeleteOptions{}); err != nil {
						t.Fatal(err)
					}
					patch := fmt.Sprintf(`{"metadata":{"labels":{%q:"baseline"}}}`, release.PodSecurityEnforceLabel)
					if _, err := e.kube.CoreV1().Namespaces().Patch(ctx, e.namespace, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
						t.Fatal(err)
					}
				},
				Config:      checksApplied(e.namespace, `"privileged" = "true"`),
				PlanOnly:    true,
				ExpectError: wrappedPattern(`(?s)Pods Refused by Pod Security.*enforces the "baseline".*Deployment.apps/checks.*privileged`),
			},
			{
				// The same release, within the level, plans.
				Config:             checksApplied(e.namespace, ``),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				// A validating admission policy (CEL, in the API server) refuses images from elsewhere.
				PreConfig:   func() { denyImagesFromElsewhere(t, e) },
				Config:      checksApplied(e.namespace, ``),
				PlanOnly:    true,
				ExpectError: wrappedPattern(`(?s)Object Refused by the API Server.*the ValidatingAdmissionPolicy "gitlabk8s-test-rel-[^"]*" refused a server-side dry run of Deployment.apps/checks.*images come from registry.example.com`),
			},
		},
	})
}

// denyImagesFromElsewhere binds, to e's namespace only, a ValidatingAdmissionPolicy that
// refuses Deployments whose images are not from registry.example.com, and waits until the API
// server enforces it.
func denyImagesFromElsewhere(t *testing.T, e *releaseTestEnv) {
	remove, err := testcluster.DenyPolicy{
		Name:       "gitlabk8s-test-" + e.namespace,
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}},
		Expression: "object.spec.template.spec.containers.all(c, c.image.startsWith('registry.example.com/'))",
		Message:    "images come from registry.example.com",
		Match: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
			MatchLabels: map[string]string{corev1.LabelMetadataName: e.namespace},
		}},
	}.Create(context.Background(), e.kube)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(remove)
	waitForAdmission(t, e, "images come from registry.example.com")
}

// A release into a namespace the same plan creates (a new environment) plans: its namespaced
// objects cannot be dry-run yet, and that is not an error.
func TestAccRelease_dryRunIntoANamespaceNotCreatedYet(t *testing.T) {
	testAccCluster(t)
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:             checksApplied(fmt.Sprintf("review-not-yet-%d", rand.IntN(1<<16)), ``),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
		}},
	})
}

// An identity that may not dry-run some objects still gets its plan, with one warning saying
// what was not checked.
func TestAccRelease_dryRunWithoutPermissionWarnsOnce(t *testing.T) {
	e := testAccRelease(t)
	forEachCLI(t, func(t *testing.T, bin cliBinary) {
		cli := newTerraformCLI(t, bin)
		cli.writeConfig(fmt.Sprintf("provider \"gitlabk8s\" {\n  config_context = %q\n}\n", testcluster.CIJobContext) +
			checksApplied(e.namespace, `"clusterRole" = "true"`))
		out := cli.mustRun("plan")
		if n := strings.Count(out, "Warning: Server-Side Checks Not Run"); n != 1 {
			t.Fatalf("want one warning about the checks not run, got %d:\n%s", n, out)
		}
		// The identity may not patch, but may read the cluster's schemas, which checked the fields.
		for _, want := range []string{"ClusterRole.rbac.authorization.k8s.io/" + e.namespace + "-checks", "patch is not permitted", "Plan: 1 to add",
			"fields against the cluster's own schemas"} {
			if !strings.Contains(diagnosticText(out), want) {
				t.Errorf("plan output lacks %q:\n%s", want, out)
			}
		}
	})
}

// A chart that writes storageClassName with nothing after it (Mastodon's) installs, the API
// server giving the claim the default class; every upgrade after asks to remove that class,
// which the API server refuses, as it does Helm 3's and Helm 4's upgrades of the same chart. The
// plan of the first change, which does not touch the claim, says so and how to get past it; with
// the class given, the upgrade passes and the next plan is empty.
func TestAccRelease_nullThatRemovesADefaultFailsThePlan(t *testing.T) {
	e := testAccRelease(t)
	class := defaultStorageClass(t, e)
	config := func(set string) string {
		return releaseConfig("nd", e.namespace, chartserver.FixtureChart("null-default"), "  wait = false\n  set = {\n"+set+"\n  }")
	}
	given := config(fmt.Sprintf("    message = \"changed\"\n    storageClassName = %q", class))
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config(`    message = "hello"`),
				Check: func(*terraform.State) error {
					pvc, err := e.kube.CoreV1().PersistentVolumeClaims(e.namespace).Get(context.Background(), "nd-data", metav1.GetOptions{})
					if err != nil {
						return err
					}
					if pvc.Spec.StorageClassName == nil || *pvc.Spec.StorageClassName != class {
						return fmt.Errorf("the claim's class is %v, want the default %s", pvc.Spec.StorageClassName, class)
					}
					return nil
				},
			},
			{
				Config:   config(`    message = "changed"`),
				PlanOnly: true,
				ExpectError: wrappedPattern(`(?s)Null Field Refused by the API Server.*PersistentVolumeClaim/nd-data \(from null-default/templates/all.yaml\) does not change` +
					`.*null at .spec.storageClassName.*patches.*immutable`),
			},
			{Config: given},
			{Config: given, PlanOnly: true},
		},
	})
}

// defaultStorageClass is the name of the cluster's default StorageClass.
func defaultStorageClass(t *testing.T, e *releaseTestEnv) string {
	t.Helper()
	classes, err := e.kube.StorageV1().StorageClasses().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range classes.Items {
		if c.Annotations["storageclass.kubernetes.io/is-default-class"] == "true" {
			return c.Name
		}
	}
	t.Fatal("the cluster has no default StorageClass")
	return ""
}

// An environment's plan that changes its namespace's Pod Security level hands the level to the
// plans of the releases in it, whose apply comes after the environment's: pods the new level
// admits plan and apply together with the change, where the level the namespace has now refused
// them and the change could only be applied with -target. A plan that leaves the level as it is
// still refuses them, and a plan that makes it stricter refuses the pods the stricter level
// forbids, which the dry run, evaluated under the namespace's level of the moment, lets through.
func TestAccRelease_podSecurityLevelTheEnvironmentChanges(t *testing.T) {
	c := testAccCluster(t)
	kc, err := c.Clientset(testcluster.AdminContext)
	if err != nil {
		t.Fatal(err)
	}
	namespace := fmt.Sprintf("review-psa-%04x", rand.IntN(1<<16))
	// config's warn, when set, is the namespace's warn label.
	config := func(level, set string, warn ...string) string {
		labels := fmt.Sprintf("%q = %q", release.PodSecurityEnforceLabel, level)
		for _, w := range warn {
			labels += fmt.Sprintf(", %q = %q", "pod-security.kubernetes.io/warn", w)
		}
		env := fmt.Sprintf(`
resource "gitlabk8s_environment" "review" {
  name      = "review/psa"
  namespace = %q
  labels    = { %s }
}
`, namespace, labels)
		return env + strings.Replace(checksApplied(namespace, set), fmt.Sprintf("namespace = %q", namespace), "namespace = gitlabk8s_environment.review.namespace", 1)
	}
	privileged := func(*terraform.State) error {
		d, err := kc.AppsV1().Deployments(namespace).Get(context.Background(), "checks", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if sc := d.Spec.Template.Spec.Containers[0].SecurityContext; sc == nil || sc.Privileged == nil || !*sc.Privileged {
			return fmt.Errorf("Deployment checks runs %+v, want a privileged container", d.Spec.Template.Spec.Containers[0].SecurityContext)
		}
		return nil
	}
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config("baseline", ``)},
			{
				Config:      config("baseline", `"privileged" = "true"`),
				PlanOnly:    true,
				ExpectError: wrappedPattern(`(?s)Pods Refused by Pod Security.*enforces the "baseline".*Deployment.apps/checks.*privileged`),
			},
			{
				Config:      config("restricted", `"privileged" = "true"`),
				PlanOnly:    true,
				ExpectError: wrappedPattern(`(?s)Pods Refused by Pod Security.*sets namespace review-psa-[0-9a-f]+ to enforce the "restricted".*Deployment.apps/checks.*would violate PodSecurity "restricted:latest": privileged.*runAsNonRoot != true`),
			},
			// With the namespace's warn label at "restricted", the dry run itself warns about the
			// level the plan makes it enforce, and that is what refuses the pods.
			{Config: config("baseline", ``, "restricted")},
			{
				Config:      config("restricted", `"privileged" = "true"`, "restricted"),
				PlanOnly:    true,
				ExpectError: wrappedPattern(`(?s)Pods Refused by Pod Security.*sets namespace review-psa-[0-9a-f]+ to enforce the "restricted".*Deployment.apps/checks.*would violate PodSecurity "restricted:latest": privileged`),
			},
			{
				Config:           config("privileged", `"privileged" = "true"`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check:            privileged,
			},
			// The policy version the environment's plan pins is the one the pods are evaluated
			// at: baseline admits the TCP keepalive sysctls from 1.29 on, not at 1.28.
			{
				Config:      keepalive(config("baseline", ``), "v1.28"),
				PlanOnly:    true,
				ExpectError: wrappedPattern(`(?s)Pods Refused by Pod Security.*to enforce the "baseline" Pod Security level at policy version v1.28.*Deployment.apps/checks.*would violate PodSecurity "baseline:v1.28": forbidden sysctls \(net.ipv4.tcp_keepalive_time\)`),
			},
			{
				Config:           keepalive(config("baseline", ``), "v1.29"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check: func(*terraform.State) error {
					d, err := kc.AppsV1().Deployments(namespace).Get(context.Background(), "checks", metav1.GetOptions{})
					if err != nil {
						return err
					}
					if sc := d.Spec.Template.Spec.SecurityContext; sc == nil || len(sc.Sysctls) != 1 || sc.Sysctls[0].Name != "net.ipv4.tcp_keepalive_time" {
						return fmt.Errorf("Deployment checks' pods have %+v, want the keepalive sysctl", sc)
					}
					return nil
				},
			},
		},
	})
}

// keepalive gives config's environment the enforce-version label version, and the release's
// Deployment a pod sysctl that Pod Security's baseline level admits from 1.29 on.
func keepalive(config, version string) string {
	config = strings.Replace(config, "labels    = { ", fmt.Sprintf("labels    = { %q = %q, ", release.PodSecurityVersionLabel, version), 1)
	sysctl := `jsonencode([{ op = "add", path = "/spec/template/spec/securityContext", value = { sysctls = [{ name = "net.ipv4.tcp_keepalive_time", value = "60" }] } }])`
	return strings.Replace(config, "  wait ", fmt.Sprintf("  patches = [{ target = { kind = \"Deployment\" }, patch = %s }]\n  wait ", sysctl), 1)
}

// An environment created with a Pod Security level and a release in its namespace, in one plan:
// the namespace does not exist, so nothing is dry-run in it, and the release's pods are
// evaluated against the level the environment gives it.
func TestAccRelease_podSecurityLevelOfANewEnvironment(t *testing.T) {
	testAccCluster(t)
	namespace := fmt.Sprintf("review-psa-new-%04x", rand.IntN(1<<16))
	config := restrictedEnvironment("review/psa-new", namespace) + strings.Replace(checksApplied(namespace, ``), fmt.Sprintf("namespace = %q", namespace), "namespace = gitlabk8s_environment.review.namespace", 1)
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      config,
			PlanOnly:    true,
			ExpectError: wrappedPattern(`(?s)Pods Refused by Pod Security.*sets namespace ` + namespace + ` to enforce the "restricted".*Deployment.apps/checks.*allowPrivilegeEscalation != false`),
		}},
	})
}

// A hook's pods are never dry-run, as Helm creates the hook while it applies; the plan
// evaluates those of the hooks the apply runs against the namespace's level, and refuses a
// pre-install Job whose pods it forbids, where Helm's install fails at the hook. An upgrade that
// changes a hook alone dry-runs nothing and still runs the hook: its pods are evaluated too,
// against the level the environment's plan sets and against the namespace's own.
func TestAccRelease_podSecurityRefusesAHooksPods(t *testing.T) {
	testAccCluster(t)
	namespace := fmt.Sprintf("review-psa-hooks-%04x", rand.IntN(1<<16))
	env := restrictedEnvironment("review/psa-hooks", namespace)
	hooks := func(image string) string {
		body := "  wait = false"
		if image != "" {
			body += fmt.Sprintf("\n  set = { migrationImage = %q }", image)
		}
		return strings.Replace(releaseConfig("hooks", namespace, chartserver.FixtureChart("with-hooks"), body),
			fmt.Sprintf("namespace = %q", namespace), "namespace = gitlabk8s_environment.review.namespace", 1)
	}
	baseline := strings.Replace(env, `"restricted"`, `"baseline"`, 1)
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: env},
			{
				Config:      env + hooks(""),
				PlanOnly:    true,
				ExpectError: wrappedPattern(`(?s)Pods Refused by Pod Security.*namespace ` + namespace + ` enforces the "restricted".*Job.batch/hooks-migrate \(from with-hooks/templates/migrate-job.yaml\).*runAsNonRoot != true`),
			},
			{Config: baseline + hooks("")},
			{
				Config:      env + hooks("registry.example/migrate:1.1"),
				PlanOnly:    true,
				ExpectError: wrappedPattern(`(?s)Pods Refused by Pod Security.*sets namespace ` + namespace + ` to enforce the "restricted".*Job.batch/hooks-migrate.*runAsNonRoot != true`),
			},
			{Config: env + hooks(""), ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
			{
				Config:      env + hooks("registry.example/migrate:1.1"),
				PlanOnly:    true,
				ExpectError: wrappedPattern(`(?s)Pods Refused by Pod Security.*namespace ` + namespace + ` enforces the "restricted".*Job.batch/hooks-migrate.*runAsNonRoot != true`),
			},
		},
	})
}

// restrictedEnvironment is an environment whose namespace enforces the restricted level.
func restrictedEnvironment(name, namespace string) string {
	return fmt.Sprintf(`
resource "gitlabk8s_environment" "review" {
  name      = %q
  namespace = %q
  labels    = { %q = "restricted" }
}
`, name, namespace, release.PodSecurityEnforceLabel)
}

// A plan whose environment makes the namespace's level stricter names the release's objects it
// leaves as they are whose pods the level forbids: their pods keep running, and the API server
// refuses new ones, so it warns, whether the plan changes other objects of the release or none.
func TestAccRelease_podSecurityLevelWarnsOfRunningPods(t *testing.T) {
	testAccCluster(t)
	namespace := fmt.Sprintf("review-psa-running-%04x", rand.IntN(1<<16))
	config := func(level, body string) string {
		env := strings.Replace(restrictedEnvironment("review/psa-running", namespace), `"restricted"`, strconv.Quote(level), 1)
		release := strings.Replace(checksApplied(namespace, ``), fmt.Sprintf("namespace = %q", namespace), "namespace = gitlabk8s_environment.review.namespace", 1)
		return env + strings.Replace(release, "  wait ", body+"  wait ", 1)
	}
	annotated := "  patches = [{ target = { kind = \"Service\" }, patch = jsonencode({ metadata = { annotations = { revised = \"yes\" } } }) }]\n"
	cli := newTerraformCLI(t, suiteCLI(t))
	cli.writeConfig(config("baseline", ""))
	cli.mustRun("apply", "-auto-approve")
	const warning = "Warning: Running Pods Refused by the Planned Pod Security Level"
	running := `Deployment.apps/checks (from checks/templates/deployment.yaml): would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false`
	for _, body := range []string{"", annotated} {
		cli.writeConfig(config("restricted", body))
		out := strings.Join(strings.Fields(cli.mustRun("plan")), " ")
		for _, want := range []string{warning, "sets namespace " + namespace + ` to enforce the "restricted" Pod Security level`, running} {
			if !strings.Contains(out, want) {
				t.Errorf("the plan with %q does not say %q:\n%s", body, want, out)
			}
		}
	}
	// The chart's version alone changed: nothing is dry-run, and the running pods are named.
	bumped := filepath.Join(t.TempDir(), "checks")
	if err := os.CopyFS(bumped, os.DirFS(chartserver.FixtureChart("checks"))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bumped, "Chart.yaml"), []byte("apiVersion: v2\nname: checks\nversion: 1.0.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cli.writeConfig(strings.Replace(config("restricted", ""), strconv.Quote(chartserver.FixtureChart("checks")), strconv.Quote(bumped), 1))
	out := strings.Join(strings.Fields(cli.mustRun("plan")), " ")
	if !strings.Contains(out, "chart_version") || !strings.Contains(out, warning) || !strings.Contains(out, running) {
		t.Errorf("the plan of the chart's version alone does not upgrade, or does not say %q:\n%s", running, out)
	}
	cli.writeConfig(config("baseline", annotated))
	if out := cli.mustRun("plan"); strings.Contains(out, "Running Pods Refused") {
		t.Errorf("a plan that keeps the level warns:\n%s", out)
	}
}
