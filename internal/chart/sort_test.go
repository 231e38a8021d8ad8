package chart

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
)

// templatesOfEveryKind returns n templates as a chart's rendering holds them: kinds Helm ranks
// and kinds it does not, several of one kind, hooks of install, test and unknown events with
// weights, files of several documents, partials and empty files.
func templatesOfEveryKind(n int) map[string]string {
	rng := rand.New(rand.NewPCG(7, 25))
	kinds := []string{"Deployment", "Service", "ConfigMap", "Secret", "Namespace", "Job", "Widget", "Alpha", "CustomResourceDefinition", "Ingress", "ServiceAccount", "Zebra"}
	hookAnnotations := []string{
		"",
		"",
		"",
		"    helm.sh/hook: pre-install,pre-upgrade\n    helm.sh/hook-weight: \"%d\"\n",
		"    helm.sh/hook: test\n",
		"    helm.sh/hook: post-install\n    helm.sh/hook-delete-policy: before-hook-creation\n    helm.sh/hook-weight: \"%d\"\n",
		"    helm.sh/hook: not-an-event\n",
		"    other: annotation\n",
	}
	files := map[string]string{}
	for i := range n {
		path := fmt.Sprintf("app/templates/t%04d.yaml", rng.IntN(10*n))
		switch rng.IntN(20) {
		case 0:
			files["app/templates/_helpers"+path[len("app/templates/"):]] = "{{/* a partial */}}"
			continue
		case 1:
			files[path] = "\n  \n"
			continue
		}
		var docs []string
		for d := range 1 + rng.IntN(3) {
			doc := fmt.Sprintf("apiVersion: v1\nkind: %s\nmetadata:\n  name: o%d-%d\n", kinds[rng.IntN(len(kinds))], i, d)
			if a := hookAnnotations[rng.IntN(len(hookAnnotations))]; a != "" {
				if strings.Contains(a, "%d") {
					a = fmt.Sprintf(a, rng.IntN(5)-2)
				}
				doc += "  annotations:\n" + a
			}
			docs = append(docs, doc)
		}
		files[path] = strings.Join(docs, "---\n")
	}
	return files
}

func TestSortManifests_isHelmsOrderOnEveryCoreCount(t *testing.T) {
	for _, n := range []int{0, 1, 40, 300} {
		files := templatesOfEveryKind(n)
		wantHooks, wantManifests, err := releaseutil.SortManifests(files, nil, releaseutil.InstallOrder)
		if err != nil {
			t.Fatal(err)
		}
		if n == 300 && (len(wantHooks) < 20 || len(wantManifests) < 200) {
			t.Fatalf("the fixture has %d hooks and %d objects, too few to compare", len(wantHooks), len(wantManifests))
		}
		for _, cores := range []int{1, 2, 3, 8} {
			onCores(t, cores, func() {
				hooks, manifests, err := sortManifests(files)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(hooks, wantHooks) {
					t.Errorf("%d templates, %d cores: hooks differ from Helm's", n, cores)
				}
				if !reflect.DeepEqual(manifests, wantManifests) {
					t.Errorf("%d templates, %d cores: objects differ from Helm's", n, cores)
				}
			})
		}
	}
}

func TestSortManifests_isHelmsOrderForOneTemplateOfManyDocuments(t *testing.T) {
	var docs []string
	templates := templatesOfEveryKind(300)
	for _, path := range slices.Sorted(maps.Keys(templates)) {
		if !strings.Contains(path, "_helpers") {
			docs = append(docs, templates[path])
		}
	}
	files := map[string]string{"app/templates/all.yaml": strings.Join(docs, "\n---\n"), "app/templates/_helpers.tpl": "{{/* a partial */}}"}
	wantHooks, wantManifests, err := releaseutil.SortManifests(files, nil, releaseutil.InstallOrder)
	if err != nil {
		t.Fatal(err)
	}
	for _, cores := range []int{1, 2, 4} {
		onCores(t, cores, func() {
			hooks, manifests, err := sortManifests(files)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(hooks, wantHooks) || !reflect.DeepEqual(manifests, wantManifests) {
				t.Errorf("%d cores: %d hooks and %d objects, unlike Helm's %d and %d or in another order", cores, len(hooks), len(manifests), len(wantHooks), len(wantManifests))
			}
		})
	}
}

func TestSortManifests_theErrorIsHelms(t *testing.T) {
	files := templatesOfEveryKind(200)
	files["app/templates/t0400.yaml"] = "kind: [unclosed"
	files["app/templates/t1900.yaml"] = "kind: [unclosed"
	_, _, want := releaseutil.SortManifests(files, nil, releaseutil.InstallOrder)
	if want == nil {
		t.Fatal("Helm sorted broken templates")
	}
	for _, cores := range []int{1, 2, 4} {
		onCores(t, cores, func() {
			if _, _, err := sortManifests(files); err == nil || err.Error() != want.Error() {
				t.Errorf("%d cores: error %v, want Helm's %v", cores, err, want)
			}
		})
	}
}
