package manifest

import (
	"crypto/sha256"
	"encoding/json"
	"maps"
	"reflect"
	"sync/atomic"
	"testing"
)

// A later process that takes a release's record writes only the object that changed, and
// gives the others the texts of the state.
func TestRememberWritten_aLaterProcessWritesOnlyWhatChanged(t *testing.T) {
	manifests, objs, _ := writtenRelease(t)
	rec, ok := RecordWritten(manifests, "build-1")
	if !ok || len(rec.Digests) != len(manifests) {
		t.Fatalf("record of %d manifests: ok %t, %d digests", len(manifests), ok, len(rec.Digests))
	}
	for i, d := range rec.Digests {
		if d == ([sha256.Size]byte{}) {
			t.Fatalf("digest %d unknown, though this process wrote every text", i)
		}
	}
	data, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}

	// The next process: an empty memory, the state's texts and the record read back.
	forgetWritten(t)
	var writes atomic.Int32
	written.write = func(obj Object) (string, error) { writes.Add(1); return Render(obj) }
	var back TextRecord
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if taken := RememberWritten(maps.Clone(manifests), back, "build-1"); taken != len(manifests) {
		t.Fatalf("took %d texts of %d", taken, len(manifests))
	}
	again := writeOneChanged(t, objs)
	if writes.Load() != 1 {
		t.Errorf("%d objects written for one changed, want 1", writes.Load())
	}
	changed := changedKeys(manifests, again)
	if len(changed) != 1 {
		t.Fatalf("manifests %v differ from the state's, want 1", changed)
	}
	if want, _ := Render(normalizedRedacted(t, objs, changed[0])); again[changed[0]] != want {
		t.Errorf("%s: %q, want what Render writes, %q", changed[0], again[changed[0]], want)
	}
}

// normalizedRedacted returns the object of objs with key, as Manifests writes it.
func normalizedRedacted(t *testing.T, objs []Object, key string) Object {
	t.Helper()
	r := releaseRedactor().withValues(harvestSecretValues(objs))
	var found Object
	err := r.eachKeyed(objs, "review-x", BuiltinIsNamespaced, func(k string, obj Object) error {
		if k == key {
			r.redactInPlace(obj)
			found = obj
		}
		return nil
	})
	if err != nil || found == nil {
		t.Fatalf("%s: %v, found %t", key, err, found != nil)
	}
	return found
}

// A record is taken only by the build that made it, for exactly the texts it was made of.
func TestRememberWritten_refusesARecordOfOtherTextsOrAnotherBuild(t *testing.T) {
	manifests, _, _ := writtenRelease(t)
	rec, ok := RecordWritten(manifests, "build-1")
	if !ok {
		t.Fatal("no record")
	}
	var someKey string
	for key := range manifests {
		someKey = key
		break
	}
	edited := maps.Clone(manifests)
	edited[someKey] += "# edited\n"
	renamed := maps.Clone(manifests)
	renamed[someKey+"-x"] = renamed[someKey]
	delete(renamed, someKey)
	more := maps.Clone(manifests)
	more["v1/ConfigMap/review-x/another"] = "kind: ConfigMap\n"
	fewer := maps.Clone(manifests)
	delete(fewer, someKey)
	for _, tt := range []struct {
		name      string
		manifests map[string]string
		writer    string
	}{
		{"a text edited", edited, "build-1"},
		{"a key renamed", renamed, "build-1"},
		{"a manifest more", more, "build-1"},
		{"a manifest fewer", fewer, "build-1"},
		{"another build", manifests, "build-2"},
		{"a build without identity", manifests, ""},
	} {
		forgetWritten(t)
		if taken := RememberWritten(tt.manifests, rec, tt.writer); taken != 0 {
			t.Errorf("%s: took %d texts, want none", tt.name, taken)
		}
		if _, known := written.digests.get(manifests[someKey]); known {
			t.Errorf("%s: a text remembered", tt.name)
		}
	}
	cut := rec
	cut.Digests = rec.Digests[:10]
	forgetWritten(t)
	if taken := RememberWritten(manifests, cut, "build-1"); taken != 0 {
		t.Errorf("a record of fewer digests than texts: took %d texts, want none", taken)
	}
	if _, ok := RecordWritten(manifests, ""); ok {
		t.Error("a record made without the build's identity")
	}
}

// Texts this process did not write are recorded as unknown, and a record of none is none.
func TestRecordWritten_textsNotWrittenHereAreUnknown(t *testing.T) {
	manifests, _, _ := writtenRelease(t)
	withHook := maps.Clone(manifests)
	withHook["batch/v1/Job/review-x/hook"] = "kind: Job\n"
	rec, ok := RecordWritten(withHook, "build-1")
	if !ok {
		t.Fatal("no record")
	}
	unknown := 0
	for _, d := range rec.Digests {
		if d == ([sha256.Size]byte{}) {
			unknown++
		}
	}
	if unknown != 1 {
		t.Errorf("%d unknown digests, want 1 (the hook's)", unknown)
	}
	forgetWritten(t)
	if taken := RememberWritten(withHook, rec, "build-1"); taken != len(manifests) {
		t.Errorf("took %d texts, want %d: all but the unknown one", taken, len(manifests))
	}
	forgetWritten(t)
	if _, ok := RecordWritten(manifests, "build-1"); ok {
		t.Error("a record of texts this process never wrote")
	}
}

func TestTextRecord_JSON(t *testing.T) {
	rec := TextRecord{Writer: "b", Digests: make([][sha256.Size]byte, 3)}
	rec.Texts[0], rec.Digests[1][5] = 1, 7
	data, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	var back TextRecord
	if err := json.Unmarshal(data, &back); err != nil || !reflect.DeepEqual(back, rec) {
		t.Errorf("read back %+v, %v; want %+v", back, err, rec)
	}
	for _, bad := range []string{`{"writer":"b","texts":"AAEC","digests":""}`, `{"writer":"b","texts":"` + string(make([]byte, 0)) + `","digests":"AAEC"}`, `[]`} {
		if err := json.Unmarshal([]byte(bad), &back); err == nil {
			t.Errorf("%s read as a record", bad)
		}
	}
}
