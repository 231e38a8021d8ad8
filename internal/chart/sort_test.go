package chart

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	release "helm.sh/helm/v4/pkg/release/v1"
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
			forgetSorted(t)
			onCores(t, cores, func() {
				// The second time, every document's sort comes from memory.
				for _, pass := range []string{"sorted", "from memory"} {
					hooks, manifests, err := sortManifests(files)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(hooks, wantHooks) {
						t.Errorf("%d templates, %d cores, %s: hooks differ from Helm's", n, cores, pass)
					}
					if !reflect.DeepEqual(manifests, wantManifests) {
						t.Errorf("%d templates, %d cores, %s: objects differ from Helm's", n, cores, pass)
					}
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
		forgetSorted(t)
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
		forgetSorted(t)
		onCores(t, cores, func() {
			if _, _, err := sortManifests(files); err == nil || err.Error() != want.Error() {
				t.Errorf("%d cores: error %v, want Helm's %v", cores, err, want)
			}
		})
	}
}

// forgetSorted gives the test a memory of sorted documents of its own, empty, counting the
// documents Helm sorts.
func forgetSorted(t *testing.T) *atomic.Int32 {
	t.Helper()
	before := sortedDocuments
	var sorts atomic.Int32
	sortedDocuments = newSortMemo(1<<14, func(path, text string) ([]*release.Hook, []releaseutil.Manifest, error) {
		sorts.Add(1)
		return releaseutil.SortManifests(map[string]string{path: text}, nil, releaseutil.InstallOrder)
	})
	t.Cleanup(func() { sortedDocuments = before })
	return &sorts
}

func TestSortMemo_sortsEachDocumentOnceAndHandsOutCopies(t *testing.T) {
	sorts := forgetSorted(t)
	hook := "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate\n  annotations:\n    helm.sh/hook: pre-install\n    helm.sh/hook-delete-policy: before-hook-creation\n"
	object := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  annotations:\n    team: web\n"
	hooks, _, err := sortedDocuments.sort("app/templates/job.yaml", hook)
	if err != nil || len(hooks) != 1 {
		t.Fatalf("%d hooks, %v", len(hooks), err)
	}
	_, manifests, err := sortedDocuments.sort("app/templates/cm.yaml", object)
	if err != nil || len(manifests) != 1 {
		t.Fatalf("%d objects, %v", len(manifests), err)
	}
	// A caller changes what it was given, as an install changes its hooks.
	hooks[0].Weight = 9
	hooks[0].Events[0] = "post-delete"
	hooks[0].DeletePolicies = append(hooks[0].DeletePolicies[:0], "hook-failed")
	manifests[0].Head.Metadata.Annotations["team"] = "changed"
	manifests[0].Head.Kind = "Changed"

	wantHooks, _, _ := releaseutil.SortManifests(map[string]string{"app/templates/job.yaml": hook}, nil, releaseutil.InstallOrder)
	_, wantManifests, _ := releaseutil.SortManifests(map[string]string{"app/templates/cm.yaml": object}, nil, releaseutil.InstallOrder)
	again, _, err := sortedDocuments.sort("app/templates/job.yaml", hook)
	if err != nil || !reflect.DeepEqual(again, wantHooks) {
		t.Errorf("the hook from memory is %+v, want Helm's %+v: a caller's change reached the memory", again[0], wantHooks[0])
	}
	_, againManifests, err := sortedDocuments.sort("app/templates/cm.yaml", object)
	if err != nil || !reflect.DeepEqual(againManifests, wantManifests) {
		t.Errorf("the object from memory is %+v, want Helm's: a caller's change reached the memory", againManifests[0].Head)
	}
	// What comes from memory is a copy too.
	again[0].Events[0] = "post-delete"
	againManifests[0].Head.Metadata.Annotations["team"] = "changed"
	third, _, _ := sortedDocuments.sort("app/templates/job.yaml", hook)
	_, thirdManifests, _ := sortedDocuments.sort("app/templates/cm.yaml", object)
	if !reflect.DeepEqual(third, wantHooks) || !reflect.DeepEqual(thirdManifests, wantManifests) {
		t.Error("a change to what came from memory reached the memory")
	}
	if sorts.Load() != 2 {
		t.Errorf("%d sorts of two documents sorted three times each, want 2", sorts.Load())
	}
	// The path is part of what Helm records (the hook's Path, the object's Name).
	if _, other, _ := sortedDocuments.sort("app/templates/other.yaml", object); len(other) != 1 || other[0].Name != "app/templates/other.yaml" {
		t.Errorf("the same document under another path: %+v", other)
	}
	if _, _, err := sortedDocuments.sort("app/templates/bad.yaml", "kind: [unclosed"); err == nil {
		t.Error("a broken document sorted")
	}
	if _, _, err := sortedDocuments.sort("app/templates/bad.yaml", "kind: [unclosed"); err == nil {
		t.Error("a broken document sorted from memory")
	}
	if sorts.Load() != 5 {
		t.Errorf("%d sorts, want 5: another path is another document, errors are not remembered", sorts.Load())
	}
}

// TestCopyHooks_copiesEveryReferenceField fails when Helm's types get a field that shares memory
// (a slice, map or pointer) that copyHooks or copyManifests does not copy.
func TestCopyHooks_copiesEveryReferenceField(t *testing.T) {
	metadata, _ := reflect.TypeFor[releaseutil.SimpleHead]().FieldByName("Metadata")
	copied := map[reflect.Type][]string{
		reflect.TypeFor[release.Hook]():           {"Events", "DeletePolicies", "OutputLogPolicies"},
		reflect.TypeFor[releaseutil.Manifest]():   {"Head"},
		reflect.TypeFor[releaseutil.SimpleHead](): {"Metadata"},
		metadata.Type.Elem():                      {"Annotations"},
	}
	for typ, fields := range copied {
		for i := range typ.NumField() {
			f := typ.Field(i)
			switch f.Type.Kind() {
			case reflect.Slice, reflect.Map, reflect.Pointer, reflect.Interface, reflect.Chan, reflect.Func:
				if !slices.Contains(fields, f.Name) {
					t.Errorf("%s.%s (%s) is not copied", typ, f.Name, f.Type)
				}
			}
		}
	}
}
