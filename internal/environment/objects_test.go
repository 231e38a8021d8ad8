package environment

import (
	"flag"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlab"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// joinManifests prints manifests sorted by key, for golden files.
func joinManifests(manifests map[string]string) string {
	keys := sortedKeys(manifests)
	var b strings.Builder
	for _, key := range keys {
		b.WriteString("### " + key + "\n" + manifests[key])
	}
	return b.String()
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden := "testdata/" + name + ".golden"
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run go test -update and review the diff):\n%s", golden,
			manifest.FormatChanges(manifest.DiffManifests(map[string]string{name: string(want)}, map[string]string{name: got})))
	}
}

func TestBuild_manifestsMatchGolden(t *testing.T) {
	tests := []struct {
		golden string
		spec   Spec
	}{
		{"defaults", Spec{Name: "review/feature-x"}},
		{"everything", Spec{
			Name:          "review/feature-x",
			Labels:        map[string]string{"team": "payments"},
			Annotations:   map[string]string{"example.com/owner": "payments@example.com"},
			ResourceQuota: map[string]string{"requests.cpu": "0.5", "limits.memory": "1024Mi", "pods": "10", "count/deployments.apps": "5"},
			LimitRange:    &LimitRangeSpec{Max: map[string]string{"cpu": "2", "memory": "1Gi"}, DefaultRequest: map[string]string{"cpu": "100m"}, Min: map[string]string{"memory": "64Mi"}},
			NetworkPolicy: NetworkPolicySpec{AllowFromNamespaces: []string{"monitoring", "ingress-nginx"}},
			ServiceAccount: ServiceAccountSpec{Name: ptr("ci"), Rules: []Rule{
				{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get", "patch"}, ResourceNames: []string{"web"}},
			}},
		}},
		{"ci-job-access", Spec{Name: "review/feature-x", CIJobAccess: &CIJobAccessSpec{}}},
		{"namespace-only", Spec{
			Name:           "production",
			Namespace:      "shop-production",
			ServiceAccount: ServiceAccountSpec{Enabled: ptr(false)},
			NetworkPolicy:  NetworkPolicySpec{Enabled: ptr(false)},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			env, problems := Build(tt.spec, reviewJob)
			if len(problems) > 0 {
				t.Fatalf("Build: %v", problems)
			}
			manifests, err := env.Manifests()
			if err != nil {
				t.Fatalf("Manifests: %v", err)
			}
			if len(manifests) != len(env.Objects) {
				t.Errorf("%d manifests for %d objects", len(manifests), len(env.Objects))
			}
			checkGolden(t, tt.golden, joinManifests(manifests))
		})
	}
}

func TestBuild_recordAnnotationsAreAppliedButNotShown(t *testing.T) {
	env, problems := Build(Spec{Name: "review/feature-x"}, reviewJob)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	manifests, err := env.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range env.Objects {
		annotations := obj["metadata"].(map[string]any)["annotations"].(map[string]any)
		if annotations[gitlab.AnnotationPipelineURL] != reviewJob.PipelineURL || annotations[gitlab.AnnotationCommitSHA] != reviewJob.CommitSHA {
			t.Errorf("%s lacks the job's record annotations: %v", obj["kind"], annotations)
		}
	}
	for key, text := range manifests {
		for _, volatile := range gitlab.VolatileAnnotations {
			if strings.Contains(text, volatile) {
				t.Errorf("manifest %s shows the volatile annotation %s", key, volatile)
			}
		}
	}

	// Another pipeline plans the same manifests.
	otherJob := reviewJob
	otherJob.PipelineURL, otherJob.CommitSHA, otherJob.MergeRequestIID = "https://gitlab.example/group/app/-/pipelines/8", "fedcba9876543210", "12"
	other, _ := Build(Spec{Name: "review/feature-x"}, otherJob)
	otherManifests, err := other.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	if changes := manifest.DiffManifests(manifests, otherManifests); len(changes) > 0 {
		t.Errorf("a new pipeline changed the manifests:\n%s", manifest.FormatChanges(changes))
	}
}

func TestBuild_everyObjectIsOwnedByTheEnvironment(t *testing.T) {
	spec := Spec{Name: "review/feature-x", ResourceQuota: map[string]string{"pods": "3"}, LimitRange: &LimitRangeSpec{Default: map[string]string{"cpu": "1"}}}
	env, problems := Build(spec, reviewJob)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	var kinds []string
	for _, obj := range env.Objects {
		kinds = append(kinds, obj["kind"].(string))
		metadata := obj["metadata"].(map[string]any)
		if !gitlab.OwnedBy(toStrings(metadata["annotations"]), toStrings(metadata["labels"]), spec.Name) {
			t.Errorf("%s %s does not carry the ownership marker", obj["kind"], metadata["name"])
		}
		if ns, _ := metadata["namespace"].(string); obj["kind"] != "Namespace" && ns != env.Namespace {
			t.Errorf("%s is in namespace %q, want %q", obj["kind"], ns, env.Namespace)
		}
	}
	want := []string{"Namespace", "ServiceAccount", "Role", "RoleBinding", "ResourceQuota", "LimitRange", "NetworkPolicy"}
	if !slices.Equal(kinds, want) {
		t.Errorf("objects in order %v, want %v", kinds, want)
	}
}

func toStrings(v any) map[string]string {
	m, _ := v.(map[string]any)
	out := map[string]string{}
	for k, val := range m {
		out[k], _ = val.(string)
	}
	return out
}

func TestResolve_slugAndNamespace(t *testing.T) {
	tests := []struct {
		desc     string
		spec     Spec
		ci       gitlab.CIMetadata
		slug, ns string
	}{
		{"job's own environment uses CI_ENVIRONMENT_SLUG", Spec{Name: "review/feature-x"}, reviewJob, "review-feat-abc123", "group-app-42-review-feat-abc123"},
		{"another environment gets GitLab's computed slug", Spec{Name: "production"}, reviewJob, "production", "group-app-42-production"},
		{"explicit namespace", Spec{Name: "production", Namespace: "shop"}, reviewJob, "production", "shop"},
		{"outside CI", Spec{Name: "review/feature-x"}, gitlab.CIMetadata{}, gitlab.EnvironmentSlug("review/feature-x"), gitlab.EnvironmentSlug("review/feature-x")},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			slug, ns := Resolve(tt.spec, tt.ci)
			if slug != tt.slug || ns != tt.ns {
				t.Errorf("Resolve = %q, %q; want %q, %q", slug, ns, tt.slug, tt.ns)
			}
		})
	}
}

func TestBuild_defaultNamespaceThatIsProtectedIsRefused(t *testing.T) {
	_, problems := Build(Spec{Name: "default"}, gitlab.CIMetadata{})
	if len(problems) != 1 || problems[0].Path.String() != "namespace" || !strings.Contains(problems[0].Detail, "Set namespace explicitly") {
		t.Fatalf("problems = %v, want one on namespace telling to set it", problems)
	}
}

func TestImportCandidates_coverEveryDefaultObject(t *testing.T) {
	spec := Spec{Name: "review/x", ResourceQuota: map[string]string{"pods": "1"}, LimitRange: &LimitRangeSpec{Max: map[string]string{"cpu": "1"}}, CIJobAccess: &CIJobAccessSpec{}}
	env, problems := Build(spec, gitlab.CIMetadata{ProjectID: "7"})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	candidates := map[string]bool{}
	for _, obj := range ImportCandidates(env.Namespace) {
		candidates[manifest.Key(obj, env.Namespace)] = true
	}
	for _, obj := range env.Objects {
		if key := manifest.Key(obj, env.Namespace); !candidates[key] {
			t.Errorf("ImportCandidates misses %s", key)
		}
	}
	if len(candidates) != len(env.Objects) {
		t.Errorf("%d candidates for %d objects", len(candidates), len(env.Objects))
	}
}
