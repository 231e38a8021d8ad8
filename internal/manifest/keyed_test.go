package manifest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"strings"
	"testing"
)

func secretWith(value string) Object {
	return Object{
		"apiVersion": "v1", "kind": "Secret",
		"metadata":   map[string]any{"name": "creds"},
		"stringData": map[string]any{"password": value},
	}
}

func secretMarker(t *testing.T, r *Redactor, value string) string {
	t.Helper()
	return r.Object(secretWith(value))["stringData"].(map[string]any)["password"].(string)
}

func TestKeyedMarkers_showChangesAndCannotBeTested(t *testing.T) {
	key, err := NewRedactionKey()
	if err != nil || len(key) != RedactionKeyLength {
		t.Fatalf("NewRedactionKey() = %d bytes, %v", len(key), err)
	}
	other, _ := NewRedactionKey()
	if bytes.Equal(key, other) {
		t.Fatal("two redaction keys are equal")
	}
	const value = "1234"
	r := NewRedactor(nil, key, nil)
	marker := secretMarker(t, r, value)
	unkeyed := sha256.Sum256([]byte(value))
	tests := []struct {
		desc string
		ok   bool
	}{
		{"a keyed marker is an hmac marker: " + marker, strings.HasPrefix(marker, "(sensitive value hmac:") && markerPattern.MatchString(marker)},
		{"the same key and value give the same marker", secretMarker(t, NewRedactor(nil, key, nil), value) == marker},
		{"a changed value gives another marker", secretMarker(t, r, "1235") != marker},
		{"the same value under another key gives another marker", secretMarker(t, NewRedactor(nil, other, nil), value) != marker},
		{"the marker is not the unkeyed SHA-256 of the value", !strings.Contains(marker, hex.EncodeToString(unkeyed[:])[:secretHashLength])},
		{"without a key the marker has no hash", secretMarker(t, NewRedactor(nil, nil, nil), value) == redactedMarker},
	}
	for _, tt := range tests {
		if !tt.ok {
			t.Error(tt.desc)
		}
	}
}

func TestRedaction_encodeAndParse(t *testing.T) {
	key, _ := NewRedactionKey()
	in := RedactionRecord{Key: key, Digests: map[string]string{"Secret/creds": "ab12"}}
	data, err := in.Encode()
	if err != nil {
		t.Fatal(err)
	}
	out, err := ParseRedactionRecord(data)
	if err != nil || !bytes.Equal(out.Key, key) || out.Digests["Secret/creds"] != "ab12" {
		t.Fatalf("ParseRedactionRecord(Encode()) = %+v, %v", out, err)
	}
	if none, err := ParseRedactionRecord(nil); err != nil || none.Key != nil {
		t.Errorf("ParseRedactionRecord(nil) = %+v, %v; want no key", none, err)
	}
	for _, bad := range []string{`{"key":"c2hvcnQ="}`, `not json`} {
		if _, err := ParseRedactionRecord([]byte(bad)); err == nil {
			t.Errorf("ParseRedactionRecord(%s) accepted it", bad)
		}
	}
}

func TestSameExceptUnkeyedMarkers(t *testing.T) {
	const (
		hmacA  = "(sensitive value hmac:0123456789ab)"
		hmacB  = "(sensitive value hmac:ba9876543210)"
		plain  = "(sensitive value)"
		prefix = "kind: Secret\nstringData:\n  password: "
	)
	tests := []struct {
		desc, old, shown string
		want             bool
	}{
		{"identical", prefix + hmacA, prefix + hmacA, true},
		{"plain marker before the key", prefix + plain, prefix + hmacA, true},
		{"a changed keyed marker is a change", prefix + hmacB, prefix + hmacA, false},
		{"other text differs", "kind: ConfigMap\n" + plain, prefix + hmacA, false},
		{"text after the marker differs", prefix + plain + "\nx: 1", prefix + hmacA + "\nx: 2", false},
		{"a marker more", prefix + plain + plain, prefix + hmacA, false},
		{"no markers and different", "a: 1", "a: 2", false},
		{"derived key suffixes count", prefix + plain + " (2): x", prefix + hmacA + " (3): x", false},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if got := SameExceptUnkeyedMarkers(tt.old, tt.shown); got != tt.want {
				t.Errorf("SameExceptUnkeyedMarkers(%q, %q) = %v, want %v", tt.old, tt.shown, got, tt.want)
			}
		})
	}
}

func TestKeepUnchanged(t *testing.T) {
	const (
		plain = "password: (sensitive value)"
		keyed = "password: (sensitive value hmac:0123456789ab)"
	)
	shown := map[string]string{"Secret/a": keyed, "Secret/b": keyed, "Secret/c": keyed, "Secret/new": keyed}
	old := map[string]string{"Secret/a": plain, "Secret/b": plain, "Secret/c": plain}
	digests := map[string]string{"Secret/a": "d1", "Secret/b": "d2", "Secret/c": "d3"}
	recorded := map[string]string{"Secret/a": "d1", "Secret/b": "changed"}
	got := KeepUnchanged(shown, old, digests, recorded)
	want := map[string]string{
		"Secret/a":   plain, // unchanged since the apply that recorded it
		"Secret/b":   keyed, // its digest changed: a value changed
		"Secret/c":   keyed, // no digest recorded: nothing says it is unchanged
		"Secret/new": keyed,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if shown["Secret/a"] != keyed {
		t.Error("KeepUnchanged changed its input")
	}
}

func TestSameExceptMarkers(t *testing.T) {
	for _, tt := range []struct {
		old, shown string
		want       bool
	}{
		{"a: 1", "a: 1", true},
		{"a: (sensitive value hmac:0123456789ab)\nb: 2", "a: x\nb: 2", true},
		{"a: (sensitive value hmac:0123456789ab)\nb: 2", "a: (sensitive value hmac:ba9876543210)\nb: 2", true},
		{"a: |\n  (sensitive value hmac:0123456789ab)\nb: 2", "a: |\n  x\n  y\nb: 2", true},
		{"(sensitive value hmac:0123456789ab) (2): 1", "k: 1", true},
		{"a: (sensitive value hmac:0123456789ab)\nb: 2", "a: x\nb: 3", false},
		{"a: 1", "a: 2", false},
	} {
		if got := SameExceptMarkers(tt.old, tt.shown); got != tt.want {
			t.Errorf("SameExceptMarkers(%q, %q) = %v, want %v", tt.old, tt.shown, got, tt.want)
		}
	}
}

func TestKeepConservative(t *testing.T) {
	old := map[string]string{"ConfigMap/a": "token: (sensitive value hmac:0123456789ab)", "ConfigMap/b": "x: 1"}
	shown := map[string]string{"ConfigMap/a": "token: tok", "ConfigMap/b": "x: 1"}
	recorded := map[string]string{"ConfigMap/a": "d1", "ConfigMap/b": "d2"}
	if got := KeepConservative(shown, old, map[string]string{"ConfigMap/a": "d1", "ConfigMap/b": "d2"}, recorded); !maps.Equal(got, old) {
		t.Errorf("nothing changed, yet KeepConservative = %v, want the conservative %v", got, old)
	}
	// One object changes: every manifest is shown as rendered.
	changed := map[string]string{"ConfigMap/a": "token: tok", "ConfigMap/b": "x: 2"}
	if got := KeepConservative(changed, old, map[string]string{"ConfigMap/a": "d1", "ConfigMap/b": "d3"}, recorded); !maps.Equal(got, changed) {
		t.Errorf("after a change KeepConservative = %v, want the rendering %v", got, changed)
	}
	if got := KeepConservative(shown, old, map[string]string{"ConfigMap/a": "other", "ConfigMap/b": "d2"}, recorded); !maps.Equal(got, shown) {
		t.Errorf("a changed digest behind a marker: KeepConservative = %v, want the rendering", got)
	}
	added := map[string]string{"ConfigMap/a": "token: tok", "ConfigMap/b": "x: 1", "ConfigMap/c": "y: 1"}
	if got := KeepConservative(added, old, map[string]string{"ConfigMap/a": "d1", "ConfigMap/b": "d2"}, recorded); !maps.Equal(got, added) {
		t.Errorf("an added object: KeepConservative = %v, want the rendering", got)
	}
}

func TestRedactor_ObjectDigestsOf(t *testing.T) {
	objs, err := SplitDocuments(generateHelmOutput(20))
	if err != nil {
		t.Fatal(err)
	}
	r := NewRedactor(generatedSensitive, []byte("a release's redaction key"), nil)
	key := []byte("0123456789abcdef0123456789abcdef")
	all, err := r.ObjectDigests(objs, "review-x", nil, key)
	if err != nil || len(all) != 20 {
		t.Fatalf("ObjectDigests = %d digests, %v; want 20", len(all), err)
	}
	wanted := map[string]bool{}
	for k := range all {
		if len(wanted) < 3 {
			wanted[k] = true
		}
	}
	some, err := r.ObjectDigestsOf(objs, "review-x", nil, key, func(k string) bool { return wanted[k] })
	if err != nil {
		t.Fatal(err)
	}
	if len(some) != len(wanted) {
		t.Errorf("%d digests of the %d objects wanted", len(some), len(wanted))
	}
	for k, digest := range some {
		if !wanted[k] || digest != all[k] {
			t.Errorf("%s: digest %s, wanted %v; ObjectDigests gives %s", k, digest, wanted[k], all[k])
		}
	}
}
