package provider

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chartserver"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/testcluster"
)

// zooRelease names the release of every zoo chart, in the provider's namespace and in the
// namespace Helm installs the same chart into, so the two hold objects of the same names.
const zooRelease = "zoo"

// zooChart is one chart of testdata/charts/zoo-*, reproducing patterns public charts use,
// with the one-value change its life goes through.
type zooChart struct {
	fixture string
	// name names the subtest when one fixture goes through its life with other values.
	name string
	// set is the base values, as --set pairs; change is the one value changed afterwards.
	set    map[string]string
	change [2]string
	// changes is what the plan of the change must show, keyed by manifest key.
	changes map[string]*manifestLines
	// shown is an object the first plan shows in full, and a line of it.
	shown [2]string
	// clusterScoped lists cluster-scoped kinds the chart creates, named after the namespace.
	clusterScoped []schema.GroupVersionResource
	// kinds lists namespaced kinds beyond zooKinds the chart creates.
	kinds []schema.GroupVersionResource
	// kept names the ConfigMaps and PersistentVolumeClaims that destroy leaves in place.
	kept []string
	// bound names the PersistentVolumeClaims that must be Bound once the release is applied.
	bound []string
	// drawn names, by "resource/name", the fields whose values the chart draws (passwords,
	// certificates, ids), which the provider and Helm draw differently.
	drawn map[string][]string
}

var (
	webhookConfigurations         = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"}
	mutatingWebhookConfigurations = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations"}
)

// zooWebhook is the life of zoo-webhook, called name (the fixture's when empty), with set.
func zooWebhook(name string, set map[string]string) zooChart {
	return zooChart{
		fixture: "zoo-webhook",
		name:    name,
		set:     set,
		shown:   [2]string{"Service/zoo-webhook", "targetPort: 8443"},
		change:  [2]string{"message", "changed"},
		changes: map[string]*manifestLines{
			"ConfigMap/zoo-config": {removed: []string{"message: hello"}, added: []string{"message: changed"}},
		},
		clusterScoped: []schema.GroupVersionResource{webhookConfigurations},
		drawn: map[string][]string{
			"configmaps/zoo-config":   {".data.installation"},
			"secrets/zoo-webhook-tls": {".data.tls\\.crt", ".data.tls\\.key", ".data.ca\\.crt"},
		},
	}
}

// zooPasswordsDrawn are the passwords zoo-passwords draws.
var zooPasswordsDrawn = map[string][]string{
	"secrets/zoo-db":    {".data.password", ".data.replication-password"},
	"secrets/zoo-admin": {".data.admin-password"},
}

var zooCharts = []zooChart{
	{
		// podinfo's pattern: helm test Pods named with randAlphaNum, an HPA that owns the
		// replica count, a Job before install and one after each upgrade.
		fixture: "zoo-podinfo",
		shown:   [2]string{"ConfigMap/zoo-config", "message: hello"},
		change:  [2]string{"message", "changed"},
		changes: map[string]*manifestLines{
			"ConfigMap/zoo-config": {removed: []string{"message: hello"}, added: []string{"message: changed"}},
			"Job.batch/zoo-post-upgrade": {
				removed: []string{"- --revision=1", "- --upgrade=false"},
				added:   []string{"- --revision=2", "- --upgrade=true"},
			},
		},
	},
	{
		// bitnami's common.secrets.passwords.manage and grafana's admin password: looked up,
		// else generated; a StatefulSet reads the password.
		fixture: "zoo-passwords",
		shown:   [2]string{"StatefulSet.apps/zoo", "key: password"},
		change:  [2]string{"message", "changed"},
		changes: map[string]*manifestLines{
			"ConfigMap/zoo-config": {removed: []string{"message: hello"}, added: []string{"message: changed"}},
		},
		drawn: zooPasswordsDrawn,
	},
	{
		// The same with persistence on, as a database keeps its data: the StatefulSet's
		// volumeClaimTemplates are bound by the cluster's default StorageClass before its pod
		// is ready, and destroy leaves the claims, as helm uninstall does.
		fixture: "zoo-passwords",
		name:    "zoo-passwords-persistence",
		set:     map[string]string{"persistence.enabled": "true"},
		shown:   [2]string{"StatefulSet.apps/zoo", "storage: 1Gi"},
		change:  [2]string{"message", "changed"},
		changes: map[string]*manifestLines{
			"ConfigMap/zoo-config": {removed: []string{"message: hello"}, added: []string{"message: changed"}},
		},
		bound: []string{"data-zoo-0"},
		kept:  []string{"persistentvolumeclaims/data-zoo-0"},
		drawn: zooPasswordsDrawn,
	},
	// A webhook whose certificate the chart generates (genCA, genSignedCert), a hook Job that
	// patches its caBundle, and an installation id from uuidv4.
	zooWebhook("", nil),
	// The same with the certificate's Secret a hook: the webhook's caBundle, its CA, is hidden
	// in the refreshed manifests as in the plan's.
	zooWebhook("zoo-webhook-cert-as-hook", map[string]string{"certAsHook": "true"}),
	{
		// A webhook whose caBundle the chart leaves for its server to write at run time.
		fixture: "zoo-injected-ca",
		shown:   [2]string{"ConfigMap/zoo-config", "message: hello"},
		change:  [2]string{"message", "changed"},
		changes: map[string]*manifestLines{
			"ConfigMap/zoo-config": {removed: []string{"message: hello"}, added: []string{"message: changed"}},
		},
		clusterScoped: []schema.GroupVersionResource{mutatingWebhookConfigurations},
	},
	{
		// A library chart's named templates, subcharts switched by conditions, globals.
		fixture: "zoo-umbrella",
		shown:   [2]string{"ConfigMap/zoo-cache", "environment: review"},
		change:  [2]string{"cache.size", "128Mi"},
		changes: map[string]*manifestLines{
			"ConfigMap/zoo-cache": {removed: []string{"size: 64Mi"}, added: []string{"size: 128Mi"}},
		},
	},
	{
		// A CRD in crds/ and a custom resource of it in the same chart.
		fixture: "zoo-crds",
		shown:   [2]string{"Gadget.zoo.gitlabk8s.test/zoo", "size: 3"},
		change:  [2]string{"size", "4"},
		changes: map[string]*manifestLines{
			"Gadget.zoo.gitlabk8s.test/zoo": {removed: []string{"size: 3"}, added: []string{"size: 4"}},
		},
		kinds: []schema.GroupVersionResource{{Group: "zoo.gitlabk8s.test", Version: "v1", Resource: "gadgets"}},
	},
	{
		// Empty annotation and label maps Helm fills with its own, and a ConfigMap that
		// helm.sh/resource-policy: keep leaves in place on uninstall.
		fixture: "zoo-maps",
		shown:   [2]string{"ConfigMap/zoo-kept", "helm.sh/resource-policy: keep"},
		change:  [2]string{"message", "changed"},
		changes: map[string]*manifestLines{
			"ConfigMap/zoo-config": {removed: []string{"message: hello"}, added: []string{"message: changed"}},
		},
		kept: []string{"configmaps/zoo-kept"},
	},
}

// Every zoo chart goes through a review app's whole life (plan, apply, empty plan, a change
// of one value that shows only the objects using it, apply, empty plan, destroy), and
// `helm upgrade --install --wait` of the same chart and values into another namespace
// creates the same objects at each step.
func TestAccRelease_zoo(t *testing.T) {
	for _, z := range zooCharts {
		name := z.fixture
		if z.name != "" {
			name = z.name
		}
		t.Run(name, func(t *testing.T) { testZooChart(t, z) })
	}
}

func testZooChart(t *testing.T, z zooChart) {
	e := testAccRelease(t)
	oracle := e.otherNamespace(t)
	helm := helmBinary(t)
	address := "gitlabk8s_release." + zooRelease
	config := func(set map[string]string) string {
		var pairs []string
		for _, k := range slices.Sorted(maps.Keys(set)) {
			pairs = append(pairs, fmt.Sprintf("    %q = %q", k, set[k]))
		}
		return fmt.Sprintf(`
resource "gitlabk8s_release" %q {
  name      = %q
  namespace = %q
  chart     = %q
  set = {
%s
  }
}
`, zooRelease, zooRelease, e.namespace, chartserver.FixtureChart(z.fixture), strings.Join(pairs, "\n"))
	}
	changed := map[string]string{z.change[0]: z.change[1]}
	for k, v := range z.set {
		changed[k] = v
	}
	helmInstall := func(set map[string]string) {
		args := []string{"upgrade", "--install", "--wait", "--timeout", "2m", zooRelease, chartserver.FixtureChart(z.fixture)}
		for _, k := range slices.Sorted(maps.Keys(set)) {
			args = append(args, "--set", k+"="+set[k])
		}
		runHelmIn(t, helm, e.cluster, oracle, args...)
	}
	sameAsHelm := func(set map[string]string) resource.TestCheckFunc {
		return func(*terraform.State) error {
			helmInstall(set)
			return sameObjects(t, e.cluster, z, e.namespace, oracle, true)
		}
	}
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config(z.set),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectKnownValue(address, tfjsonpathManifest(z.shown[0]), knownStringContaining(z.shown[1])),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(noTestHooks(address), e.claimsBound(z.bound), sameAsHelm(z.set)),
			},
			{
				Config: config(changed),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{expectManifestChanges(address, z.changes)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: sameAsHelm(changed),
			},
		},
		CheckDestroy: func(*terraform.State) error {
			if got := e.helmRevisions(t, zooRelease); len(got) != 0 {
				return fmt.Errorf("destroy left Helm's release records: %v", got)
			}
			runHelmIn(t, helm, e.cluster, oracle, "uninstall", "--wait", zooRelease)
			if err := sameObjects(t, e.cluster, z, e.namespace, oracle, false); err != nil {
				return err
			}
			return e.keptAfterDestroy(z.kept)
		},
	})
}

// claimsBound checks that the PersistentVolumeClaims named are Bound.
func (e *releaseTestEnv) claimsBound(names []string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for _, name := range names {
			claim, err := e.kube.CoreV1().PersistentVolumeClaims(e.namespace).Get(context.Background(), name, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("claim %s: %w", name, err)
			}
			if claim.Status.Phase != corev1.ClaimBound {
				return fmt.Errorf("claim %s is %s after the apply, want Bound", name, claim.Status.Phase)
			}
		}
		return nil
	}
}

// keptAfterDestroy checks that destroy left the ConfigMaps (helm.sh/resource-policy: keep)
// and PersistentVolumeClaims (a StatefulSet's volumeClaimTemplates) named.
func (e *releaseTestEnv) keptAfterDestroy(kept []string) error {
	ctx := context.Background()
	for _, name := range kept {
		resourceName, objectName, _ := strings.Cut(name, "/")
		var err error
		switch resourceName {
		case "configmaps":
			_, err = e.kube.CoreV1().ConfigMaps(e.namespace).Get(ctx, objectName, metav1.GetOptions{})
		case "persistentvolumeclaims":
			_, err = e.kube.CoreV1().PersistentVolumeClaims(e.namespace).Get(ctx, objectName, metav1.GetOptions{})
		default:
			return fmt.Errorf("kept %s: only ConfigMaps and PersistentVolumeClaims are checked", name)
		}
		if err != nil {
			return fmt.Errorf("destroy deleted %s, which helm uninstall leaves: %w", name, err)
		}
	}
	return nil
}

// noTestHooks checks that no test hook (named "-test-" in the zoo) is among the manifests:
// install and upgrade never create them.
func noTestHooks(address string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		rs, ok := s.RootModule().Resources[address]
		if !ok {
			return fmt.Errorf("%s is not in the state", address)
		}
		for attr := range rs.Primary.Attributes {
			if strings.HasPrefix(attr, "manifests.") && strings.Contains(attr, "-test-") {
				return fmt.Errorf("manifests holds the test hook %s", strings.TrimPrefix(attr, "manifests."))
			}
		}
		return nil
	}
}

// otherNamespace creates a second namespace for the test, deleted when it ends.
func (e *releaseTestEnv) otherNamespace(t *testing.T) string {
	t.Helper()
	ns := e.namespace + "-helm"
	if _, err := e.kube.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", ns, err)
	}
	t.Cleanup(func() {
		_ = e.kube.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	return ns
}

// zooKinds are the kinds whose objects the provider's and Helm's namespaces must hold alike.
var zooKinds = []schema.GroupVersionResource{
	{Version: "v1", Resource: "configmaps"},
	{Version: "v1", Resource: "secrets"},
	{Version: "v1", Resource: "services"},
	{Version: "v1", Resource: "serviceaccounts"},
	{Version: "v1", Resource: "persistentvolumeclaims"},
	{Group: "apps", Version: "v1", Resource: "deployments"},
	{Group: "apps", Version: "v1", Resource: "statefulsets"},
	{Group: "batch", Version: "v1", Resource: "jobs"},
	{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"},
}

// sameObjects compares the objects of the zoo kinds in the provider's namespace and in
// Helm's, field by field (see objectDifferences), and that the cluster-scoped objects exist
// in both or neither, as installed says.
func sameObjects(t *testing.T, c *testcluster.Cluster, z zooChart, ours, helms string, installed bool) error {
	t.Helper()
	config, err := c.RESTConfig(testcluster.AdminContext)
	if err != nil {
		return err
	}
	client, err := dynamic.NewForConfig(config)
	if err != nil {
		return err
	}
	list := func(gvr schema.GroupVersionResource, namespace string) (map[string]map[string]any, error) {
		objs, err := client.Resource(gvr).Namespace(namespace).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		byName := map[string]map[string]any{}
		for _, obj := range objs.Items {
			if !generatedByCluster(obj.GetName(), obj.Object) {
				byName[gvr.Resource+"/"+obj.GetName()] = obj.Object
			}
		}
		return byName, nil
	}
	var problems []string
	for _, gvr := range slices.Concat(zooKinds, z.kinds) {
		a, err := list(gvr, ours)
		if err != nil {
			return err
		}
		b, err := list(gvr, helms)
		if err != nil {
			return err
		}
		if !slices.Equal(slices.Sorted(maps.Keys(a)), slices.Sorted(maps.Keys(b))) {
			problems = append(problems, fmt.Sprintf("%s: provider %v, helm %v", gvr.Resource, slices.Sorted(maps.Keys(a)), slices.Sorted(maps.Keys(b))))
			continue
		}
		for name, obj := range a {
			for _, d := range objectDifferences(obj, b[name], ours, helms, z.drawn[name]) {
				problems = append(problems, name+": "+d)
			}
		}
	}
	for _, gvr := range z.clusterScoped {
		for _, ns := range []string{ours, helms} {
			_, err := client.Resource(gvr).Get(context.Background(), ns+"-"+zooRelease, metav1.GetOptions{})
			if exists := err == nil; exists != installed {
				problems = append(problems, fmt.Sprintf("%s %s-%s: exists %v, want %v (%v)", gvr.Resource, ns, zooRelease, exists, installed, err))
			}
		}
	}
	sort.Strings(problems)
	if len(problems) > 0 {
		return fmt.Errorf("the provider's objects differ from Helm's:\n%s", strings.Join(problems, "\n"))
	}
	return nil
}

// objectDifferences returns the fields in which ours, an object in namespace ourNamespace,
// differs from helms, the same object in helmNamespace, by field path ("kubectl explain"
// form). What legitimately differs is left out: what the API server sets per object (uid,
// resourceVersion, timestamps, managedFields, the status it reports, a Service's allocated
// IPs, a claim's bound volume, the controller uid a Job selects its pods by), the namespace's
// own name wherever it appears, Helm's annotation naming the release's namespace, and drawn,
// the fields whose values the chart draws.
func objectDifferences(ours, helms map[string]any, ourNamespace, helmNamespace string, drawn []string) []string {
	a := comparableObject(ours, ourNamespace, drawn)
	b := comparableObject(helms, helmNamespace, drawn)
	differences := fieldDifferences("", a, b)
	if ours["kind"] == "Secret" {
		// A Secret's values are named, never shown.
		for i, d := range differences {
			if field, _, _ := strings.Cut(d, ": provider "); strings.HasPrefix(field, ".data.") || strings.HasPrefix(field, ".stringData.") {
				differences[i] = field + ": the values differ"
			}
		}
	}
	return differences
}

// comparableObject returns obj with what differs legitimately between two namespaces'
// copies removed or masked (see objectDifferences).
func comparableObject(obj map[string]any, namespace string, drawn []string) any {
	masked := manifest.DeepCopy(obj)
	root, _ := masked.(map[string]any)
	delete(root, "status")
	meta, _ := root["metadata"].(map[string]any)
	for _, field := range []string{"uid", "resourceVersion", "creationTimestamp", "managedFields", "namespace", "selfLink"} {
		delete(meta, field)
	}
	if annotations, ok := meta["annotations"].(map[string]any); ok {
		delete(annotations, "meta.helm.sh/release-namespace")
	}
	if owners, ok := meta["ownerReferences"].([]any); ok {
		for _, o := range owners {
			if owner, ok := o.(map[string]any); ok {
				delete(owner, "uid")
			}
		}
	}
	spec, _ := root["spec"].(map[string]any)
	switch root["kind"] {
	case "Service":
		delete(spec, "clusterIP")
		delete(spec, "clusterIPs")
	case "PersistentVolumeClaim":
		delete(spec, "volumeName")
	case "Job":
		// The Job's own uid labels it and its pods, and selects them.
		dropControllerUID(root, "metadata", "labels")
		dropControllerUID(spec, "selector", "matchLabels")
		dropControllerUID(spec, "template", "metadata", "labels")
	}
	for _, path := range drawn {
		maskField(root, splitFieldPath(path))
	}
	return replaceStrings(masked, namespace, "<namespace>")
}

// dropControllerUID removes the labels that hold a Job's uid from the map at path under obj.
func dropControllerUID(obj map[string]any, path ...string) {
	for _, key := range path {
		next, ok := obj[key].(map[string]any)
		if !ok {
			return
		}
		obj = next
	}
	delete(obj, "controller-uid")
	delete(obj, "batch.kubernetes.io/controller-uid")
}

// splitFieldPath splits a field path (".data.tls\\.crt") at the dots that are not escaped.
func splitFieldPath(path string) []string {
	var parts []string
	var current strings.Builder
	for i := 0; i < len(path); i++ {
		switch {
		case path[i] == '\\' && i+1 < len(path):
			i++
			current.WriteByte(path[i])
		case path[i] == '.':
			if current.Len() > 0 {
				parts = append(parts, current.String())
			}
			current.Reset()
		default:
			current.WriteByte(path[i])
		}
	}
	if current.Len() > 0 {
		parts = append(parts, current.String())
	}
	return parts
}

// maskField replaces the value at path under obj, when there is one, with "<drawn>".
func maskField(obj map[string]any, path []string) {
	for i, key := range path {
		if i == len(path)-1 {
			if _, ok := obj[key]; ok {
				obj[key] = "<drawn>"
			}
			return
		}
		next, ok := obj[key].(map[string]any)
		if !ok {
			return
		}
		obj = next
	}
}

// replaceStrings returns v with every occurrence of old in its strings replaced by new.
func replaceStrings(v any, old, new string) any {
	switch v := v.(type) {
	case string:
		return strings.ReplaceAll(v, old, new)
	case map[string]any:
		for k, e := range v {
			v[k] = replaceStrings(e, old, new)
		}
	case []any:
		for i, e := range v {
			v[i] = replaceStrings(e, old, new)
		}
	}
	return v
}

// fieldDifferences returns the paths under path where a and b differ, with both values.
func fieldDifferences(path string, a, b any) []string {
	am, aIsMap := a.(map[string]any)
	bm, bIsMap := b.(map[string]any)
	if aIsMap && bIsMap {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		var out []string
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			out = append(out, fieldDifferences(path+"."+k, am[k], bm[k])...)
		}
		return out
	}
	al, aIsList := a.([]any)
	bl, bIsList := b.([]any)
	if aIsList && bIsList && len(al) == len(bl) {
		var out []string
		for i := range al {
			out = append(out, fieldDifferences(fmt.Sprintf("%s[%d]", path, i), al[i], bl[i])...)
		}
		return out
	}
	if reflect.DeepEqual(a, b) {
		return nil
	}
	return []string{fmt.Sprintf("%s: provider %v, helm %v", path, a, b)}
}

// generatedByCluster reports whether an object is one the cluster or Helm's bookkeeping
// creates, not the chart: Helm's release Secrets, the namespace's default ServiceAccount
// and root CA ConfigMap.
func generatedByCluster(name string, obj map[string]any) bool {
	if t, _ := obj["type"].(string); t == "helm.sh/release.v1" {
		return true
	}
	return name == "default" && obj["kind"] == "ServiceAccount" || name == "kube-root-ca.crt"
}

// A chart directory whose Chart.yaml lists a dependency not yet in charts/ is refused with the
// fix; with dependency_update it is fetched, as helm dependency build does, and installs.
func TestAccRelease_dependencyUpdate(t *testing.T) {
	e := testAccRelease(t)
	root := writeChart(t, "deps", map[string]string{
		"lib/Chart.yaml":               "apiVersion: v2\nname: lib\nversion: 0.1.0\ntype: library\n",
		"lib/templates/_lib.tpl":       `{{- define "lib.name" }}{{ .Release.Name }}-lib{{ end }}`,
		"app/Chart.yaml":               "apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n  - name: lib\n    version: 0.1.0\n    repository: file://../lib\n",
		"app/templates/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ include \"lib.name\" . }}\n",
	})
	config := func(body string) string {
		return releaseConfig("deps", e.namespace, filepath.Join(root, "app"), body)
	}
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      config(""),
				ExpectError: wrappedText("dependencies lib are listed in Chart.yaml but missing in charts/", "dependency_update = true"),
			},
			{
				Config: config("  dependency_update = true"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue("gitlabk8s_release.deps", tfjsonpathManifest("ConfigMap/deps-lib"), knownStringContaining("name: deps-lib")),
				}},
			},
		},
	})
}

// The zoo's comparison leaves out only what differs between two namespaces' copies of an
// object, and names every other field that differs.
func TestObjectDifferences(t *testing.T) {
	object := func(namespace, uid, message, password string) map[string]any {
		return map[string]any{
			"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{
				"name": "zoo-db", "namespace": namespace, "uid": uid, "resourceVersion": uid + "7",
				"creationTimestamp": "2026-01-0" + uid[:1] + "T00:00:00Z",
				"managedFields":     []any{map[string]any{"manager": "helm", "time": uid}},
				"labels":            map[string]any{"app.kubernetes.io/managed-by": "Helm"},
				"annotations":       map[string]any{"meta.helm.sh/release-name": "zoo", "meta.helm.sh/release-namespace": namespace},
				"ownerReferences":   []any{map[string]any{"kind": "StatefulSet", "name": "zoo", "uid": uid}},
			},
			"data":   map[string]any{"message": message, "url": "https://zoo." + namespace + ".svc", "password": password},
			"status": map[string]any{"observedAt": uid},
		}
	}
	drawn := []string{".data.password"}
	ours := object("review-1", "1a", "hello", "drawn-by-the-provider")
	if d := objectDifferences(ours, object("review-1-helm", "2b", "hello", "drawn-by-helm"), "review-1", "review-1-helm", drawn); len(d) != 0 {
		t.Errorf("copies that differ only legitimately differ in %q", d)
	}
	d := objectDifferences(ours, object("review-1-helm", "2b", "changed", "drawn-by-helm"), "review-1", "review-1-helm", drawn)
	if len(d) != 1 || d[0] != ".data.message: the values differ" {
		t.Errorf("a changed field gives %q, want the one difference .data.message", d)
	}
	d = objectDifferences(ours, object("review-1-helm", "2b", "hello", "drawn-by-helm"), "review-1", "review-1-helm", nil)
	if len(d) != 1 || d[0] != ".data.password: the values differ" {
		t.Errorf("a drawn value not declared drawn gives %q, want the one difference .data.password", d)
	}
	configMap, changed := object("review-1", "1a", "hello", "x"), object("review-1-helm", "2b", "changed", "x")
	configMap["kind"], changed["kind"] = "ConfigMap", "ConfigMap"
	if d := objectDifferences(configMap, changed, "review-1", "review-1-helm", nil); len(d) != 1 || d[0] != ".data.message: provider hello, helm changed" {
		t.Errorf("a changed ConfigMap field gives %q, want it with both values", d)
	}
	if got := splitFieldPath(`.data.tls\.crt`); !slices.Equal(got, []string{"data", "tls.crt"}) {
		t.Errorf("splitFieldPath = %q", got)
	}
}
