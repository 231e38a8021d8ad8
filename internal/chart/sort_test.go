package chart

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	release "helm.sh/helm/v4/pkg/release/v1"
	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
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
				hooks, manifests, objects, objectErrs, err := sortManifests(files)
				if err != nil {
					t.Fatal(err)
				}
				checkParsedAlike(t, manifests, objects, objectErrs)
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
			hooks, manifests, objects, objectErrs, err := sortManifests(files)
			if err != nil {
				t.Fatal(err)
			}
			checkParsedAlike(t, manifests, objects, objectErrs)
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
			if _, _, _, _, err := sortManifests(files); err == nil || err.Error() != want.Error() {
				t.Errorf("%d cores: error %v, want Helm's %v", cores, err, want)
			}
		})
	}
}

// checkParsedAlike checks that the objects sortManifests parsed for each manifest are those
// manifest.SplitDocuments reads in its content and a newline, errors included.
func checkParsedAlike(t *testing.T, manifests []releaseutil.Manifest, objects [][]manifest.Object, objectErrs []error) {
	t.Helper()
	if len(objects) != len(manifests) || len(objectErrs) != len(manifests) {
		t.Fatalf("%d manifests, with %d parsed and %d errors", len(manifests), len(objects), len(objectErrs))
	}
	for i, m := range manifests {
		want, wantErr := manifest.SplitDocuments(m.Content + "\n")
		if !reflect.DeepEqual(objects[i], want) || fmt.Sprint(objectErrs[i]) != fmt.Sprint(wantErr) {
			t.Errorf("manifest %d (%s, %s): parsed %v (error %v), want %v (error %v)", i, m.Name, m.Head.Kind, objects[i], objectErrs[i], want, wantErr)
		}
	}
}

// Documents whose head Helm reads in ways of its own: values that are not strings (which it
// turns into strings, or refuses), fields named in another case (its decoder matches them),
// lists, documents of comments alone, and documents that do not parse.
func TestSortManifests_isHelmsForOddHeads(t *testing.T) {
	odd := map[string]string{
		"weight-int":        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate\n  annotations:\n    helm.sh/hook: pre-upgrade\n    helm.sh/hook-weight: 5\n",
		"weight-bool":       "apiVersion: v1\nkind: Pod\nmetadata:\n  name: probe\n  annotations:\n    helm.sh/hook: test\n    helm.sh/hook-weight: yes\n",
		"delete-policy-int": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p2\n  annotations:\n    helm.sh/hook: post-install\n    helm.sh/hook-delete-policy: 7\n",
		"kind-capital":      "apiVersion: v1\nKind: Secret\nmetadata:\n  name: capital\n",
		"name-capital":      "apiVersion: v1\nkind: Secret\nmetadata:\n  Name: capital-name\n  Annotations:\n    helm.sh/hook: pre-install\n",
		"annotations-cap":   "apiVersion: v1\nkind: Secret\nmetadata:\n  name: capital-annotations\n  Annotations:\n    helm.sh/hook: pre-install\n",
		"api-number":        "apiVersion: 1.10\nkind: Widget\nmetadata:\n  name: numbered\n",
		"name-number":       "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: 0123\n",
		"annotations-null":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bare\n  annotations:\n",
		"no-metadata":       "apiVersion: v1\nkind: ConfigMap\ndata:\n  a: b\n",
		"list":              "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: one\n- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: two\n",
		"typed-list":        "apiVersion: v1\nkind: ConfigMapList\nitems:\n- metadata:\n    name: three\n",
		"comments":          "# nothing but a comment\n",
		"quoted-escapes":    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: \"a<b>&c\\u00e9\"\n  annotations:\n    note: \"tab\\there \\\"quoted\\\" <html> \\u2028\"\n    helm.sh/hook: pre-install\n",
		"anchors":           "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: &n anchored\n  annotations:\n    copy: *n\n",
		"control-chars":     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: controls\n  annotations:\n    del: \"a\\x7fb\"\n    c1: \"a\\x85b\\x9fc\"\n    bom: \"a\\ufeffb\"\n    helm.sh/hook: pre-install\n",
		"unknown-hook":      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: skipped\n  annotations:\n    helm.sh/hook: not-an-event\n",
		"bad-object":        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  annotations:\n    a: b\n",
	}
	files := map[string]string{}
	for name, doc := range odd {
		files["app/templates/"+name+".yaml"] = doc
	}
	// A partial's file that renders an object, and one with an annotation but no hook: Helm
	// skips the first and keeps the second as an object.
	files["app/templates/_partial.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-partial\n"
	files["app/templates/annotated.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: annotated\n  annotations:\n    a: b\n"
	files["app/templates/annotations-empty.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: none\n  annotations: {}\n"
	files["app/templates/metadata-empty.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n"
	wantHooks, wantManifests, err := releaseutil.SortManifests(files, nil, releaseutil.InstallOrder)
	if err != nil {
		t.Fatal(err)
	}
	hooks, manifests, objects, objectErrs, err := sortManifests(files)
	if err != nil {
		t.Fatal(err)
	}
	checkParsedAlike(t, manifests, objects, objectErrs)
	if !reflect.DeepEqual(hooks, wantHooks) {
		t.Errorf("hooks differ from Helm's:\n%s\nwant\n%s", describeHooks(hooks), describeHooks(wantHooks))
	}
	if !reflect.DeepEqual(manifests, wantManifests) {
		t.Errorf("objects differ from Helm's:\n%s\nwant\n%s", describeManifests(manifests), describeManifests(wantManifests))
	}

	// Heads Helm refuses: each alone, its error Helm's.
	for name, doc := range map[string]string{
		"metadata-string":   "apiVersion: v1\nkind: ConfigMap\nmetadata: plain\n",
		"annotations-list":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  annotations:\n  - a\n",
		"annotation-nested": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  annotations:\n    a:\n      b: c\n",
		"kind-map":          "apiVersion: v1\nkind:\n  a: b\nmetadata:\n  name: x\n",
		"top-list":          "- a\n- b\n",
	} {
		files := map[string]string{"app/templates/" + name + ".yaml": doc}
		_, _, want := releaseutil.SortManifests(files, nil, releaseutil.InstallOrder)
		_, _, _, _, err := sortManifests(files)
		if fmt.Sprint(err) != fmt.Sprint(want) {
			t.Errorf("%s: error %v, want Helm's %v", name, err, want)
		}
	}
}

func describeHooks(hooks []*release.Hook) string {
	var b strings.Builder
	for _, h := range hooks {
		fmt.Fprintf(&b, "  %s %s %s events=%v weight=%d policies=%v\n", h.Path, h.Kind, h.Name, h.Events, h.Weight, h.DeletePolicies)
	}
	return b.String()
}

func describeManifests(manifests []releaseutil.Manifest) string {
	var b strings.Builder
	for _, m := range manifests {
		fmt.Fprintf(&b, "  %s %+v %q\n", m.Name, *m.Head, m.Content)
	}
	return b.String()
}

// HookRunsOn reads a hook's events as Helm's sorter does: a list with spaces, events of
// several operations, a test hook, an object that is no hook, and an event Helm does not know.
func TestHookRunsOn(t *testing.T) {
	hook := func(events string) manifest.Object {
		meta := map[string]any{"name": "migrate"}
		if events != "" {
			meta["annotations"] = map[string]any{"helm.sh/hook": events}
		}
		return manifest.Object{"apiVersion": "batch/v1", "kind": "Job", "metadata": meta}
	}
	for _, tt := range []struct {
		events string
		asked  []string
		want   bool
	}{
		{"pre-install, pre-upgrade", []string{"pre-upgrade", "post-upgrade"}, true},
		{"pre-install,pre-upgrade", []string{"post-install"}, false},
		{"post-upgrade", []string{"pre-upgrade", "post-upgrade"}, true},
		{"test", []string{"pre-install", "post-install"}, false},
		{"test", []string{"test"}, true},
		{"", []string{"pre-install"}, false},
		{"pre-instal", []string{"pre-install"}, false},
	} {
		if got := HookRunsOn(hook(tt.events), tt.asked...); got != tt.want {
			t.Errorf("events %q, asked %q: %v, want %v", tt.events, tt.asked, got, tt.want)
		}
	}
}
