package manifest

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// onCores runs fn with GOMAXPROCS set to n, so work split per core runs in n ranges.
func onCores(t *testing.T, n int, fn func()) {
	t.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(n))
	fn()
}

func TestSplitDocuments_sameOnEveryCoreCount(t *testing.T) {
	text := generateHelmOutput(200)
	var one, four []Object
	var errOne, errFour error
	onCores(t, 1, func() { one, errOne = SplitDocuments(text) })
	onCores(t, 4, func() { four, errFour = SplitDocuments(text) })
	if errOne != nil || errFour != nil {
		t.Fatalf("errors %v, %v", errOne, errFour)
	}
	if len(one) != 200 || !reflect.DeepEqual(one, four) {
		t.Errorf("on 4 cores %d objects unlike the %d on one", len(four), len(one))
	}
}

func TestSplitDocuments_theFirstBrokenDocumentIsNamedOnEveryCoreCount(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 100; i++ {
		if i == 41 || i == 80 {
			fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: [unclosed\n")
			continue
		}
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c%d\n", i)
	}
	for _, cores := range []int{1, 2, 4} {
		var err error
		onCores(t, cores, func() { _, err = SplitDocuments(b.String()) })
		if err == nil || !strings.HasPrefix(err.Error(), "document 41 ") {
			t.Errorf("%d cores: error %v, want it to name document 41, the first broken one", cores, err)
		}
	}
}

func TestManifests_sameOnEveryCoreCount(t *testing.T) {
	forgetWritten(t)
	objs, err := SplitDocuments(generateHelmOutput(200))
	if err != nil {
		t.Fatal(err)
	}
	r := NewRedactor(generatedSensitive, []byte("a release's redaction key"), nil)
	var one, four map[string]string
	var errOne, errFour error
	onCores(t, 1, func() { one, errOne = r.Manifests(objs, "review-x", nil) })
	forgetWritten(t) // the four cores write every object too
	onCores(t, 4, func() { four, errFour = r.Manifests(objs, "review-x", nil) })
	if errOne != nil || errFour != nil {
		t.Fatalf("errors %v, %v", errOne, errFour)
	}
	if len(one) != 200 || !reflect.DeepEqual(one, four) {
		t.Errorf("on 4 cores %d manifests unlike the %d on one", len(four), len(one))
	}
	for _, secret := range generatedSensitive {
		if text := joinManifests(four); strings.Contains(text, secret) {
			t.Fatalf("a sensitive value shows on 4 cores")
		}
	}
}

// The redactor of a plan with sensitive chart values also hides what it found derived from them;
// the cores read it side by side (run with -race).
func TestManifests_derivedValuesHiddenAlikeOnEveryCoreCount(t *testing.T) {
	text := generateHelmOutput(200)
	alternate := text
	for i, secret := range generatedSensitive {
		alternate = strings.ReplaceAll(alternate, secret, fmt.Sprintf("alternate-value-%02d-Xy7wJ", i))
	}
	objs, err := SplitDocuments(text)
	if err != nil {
		t.Fatal(err)
	}
	alternates, err := SplitDocuments(alternate)
	if err != nil {
		t.Fatal(err)
	}
	derived, err := FindDerived(objs, nil, alternates)
	if err != nil || derived.Len() == 0 {
		t.Fatalf("derived values: %d, %v; the fixture must have some", derived.Len(), err)
	}
	r := NewRedactor(generatedSensitive, []byte("a release's redaction key"), derived)
	var one, four map[string]string
	var errOne, errFour error
	forgetWritten(t)
	onCores(t, 1, func() { one, errOne = r.Manifests(objs, "review-x", nil) })
	forgetWritten(t)
	onCores(t, 4, func() { four, errFour = r.Manifests(objs, "review-x", nil) })
	if errOne != nil || errFour != nil {
		t.Fatalf("errors %v, %v", errOne, errFour)
	}
	if len(one) != 200 || !reflect.DeepEqual(one, four) {
		t.Errorf("on 4 cores %d manifests unlike the %d on one", len(four), len(one))
	}
	if text := joinManifests(four); strings.Contains(text, "postgres://app:") {
		t.Error("a value derived from a sensitive one shows on 4 cores")
	}
}

func TestManifests_theFirstUnwritableObjectIsNamedOnEveryCoreCount(t *testing.T) {
	var objs []Object
	for i := 1; i <= 100; i++ {
		obj := Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": fmt.Sprintf("c%03d", i)}}
		if i == 30 || i == 90 {
			obj["data"] = map[string]any{"unwritable": make(chan int)}
		}
		objs = append(objs, obj)
	}
	for _, cores := range []int{1, 2, 4} {
		var err error
		onCores(t, cores, func() { _, err = Manifests(objs, "review-x", nil) })
		if err == nil || !strings.Contains(err.Error(), "c030") {
			t.Errorf("%d cores: error %v, want it to name c030, the first object that cannot be written", cores, err)
		}
	}
}
