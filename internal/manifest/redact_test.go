package manifest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"slices"
	"strings"
	"testing"
)

func TestRedactor_stringHidesEveryOccurrence(t *testing.T) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	tests := []struct {
		desc      string
		sensitive []string
		in        string
		want      string
	}{
		{"nothing sensitive", nil, "token=abc", "token=abc"},
		{"empty values are ignored", []string{""}, "token=abc", "token=abc"},
		{"plain", []string{"s3cret"}, "password=s3cret", "password=(sensitive value)"},
		{"every occurrence", []string{"s3cret"}, "s3cret and s3cret", "(sensitive value) and (sensitive value)"},
		{"standard base64", []string{"s3cret"}, "auth: " + b64("s3cret"), "auth: (sensitive value)"},
		{"url base64 without padding", []string{"??>>??"}, "x=" + base64.RawURLEncoding.EncodeToString([]byte("??>>??")) + ".sig", "x=(sensitive value).sig"},
		{"longer value wins over its prefix", []string{"abc", "abcdef"}, "xabcdefx", "x(sensitive value)x"},
		{"overlapping values become one marker", []string{"secret123", "123xyz"}, "a secret123xyz b", "a (sensitive value) b"},
		{"adjacent values become one marker", []string{"aaa", "bbb"}, "-aaabbb-", "-(sensitive value)-"},
		{"one-byte value", []string{"x"}, "axbx", "a(sensitive value)b(sensitive value)"},
		{"value at the very end", []string{"tail"}, "the tail", "the (sensitive value)"},
		{"multi-line value", []string{"-----BEGIN KEY-----\nMIIE\n-----END KEY-----"}, "key: -----BEGIN KEY-----\nMIIE\n-----END KEY-----\n", "key: (sensitive value)\n"},
		{"shorter than any value", []string{"long-value"}, "short", "short"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if got := NewRedactor(tt.sensitive, nil, nil).String(tt.in); got != tt.want {
				t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
	var nilRedactor *Redactor
	if got := nilRedactor.String("s3cret"); got != "s3cret" {
		t.Errorf("nil Redactor changed the text: %q", got)
	}
}

func TestRedactor_secretValuesBecomeHashMarkers(t *testing.T) {
	const value = "correct horse battery staple"
	secret := Object{
		"apiVersion": "v1",
		"kind":       "Secret",
		"metadata": map[string]any{
			"name":        "creds",
			"annotations": map[string]any{lastAppliedAnnotation: `{"stringData":{"b":"` + value + `"}}`},
		},
		"data":       map[string]any{"a": base64.StdEncoding.EncodeToString([]byte(value)), "not-base64": "%%%"},
		"stringData": map[string]any{"b": value, "c": "other", "port": int64(5432)},
	}
	keyed := NewRedactor(nil, testRedactionKey, nil)
	got := keyed.Object(secret)
	data := got["data"].(map[string]any)
	stringData := got["stringData"].(map[string]any)

	tests := []struct {
		desc      string
		got, want any
	}{
		{"data is hashed decoded", data["a"], keyed.marker([]byte(value))},
		{"stringData is hashed as is", stringData["b"], keyed.marker([]byte(value))},
		{"same value, same marker", data["a"], stringData["b"]},
		{"invalid base64 is hashed as written", data["not-base64"], keyed.marker([]byte("%%%"))},
		{"non-string values are hidden too", stringData["port"], keyed.marker([]byte("5432"))},
		{"last applied configuration is hidden", objectMetadata(got)["annotations"].(map[string]any)[lastAppliedAnnotation], redactedMarker},
		{"marker format", stringData["c"], "(sensitive value hmac:" + hmacHex(testRedactionKey, "other")[:12] + ")"},
		{"without a key, no hash", NewRedactor(nil, nil, nil).Object(secret)["stringData"].(map[string]any)["c"], redactedMarker},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %v, want %v", tt.got, tt.want)
			}
		})
	}
	if secret["stringData"].(map[string]any)["b"] != value {
		t.Error("Object changed its input")
	}
}

func TestRedactor_objectHidesValuesAndKeysEverywhere(t *testing.T) {
	r := NewRedactor([]string{"hunter22"}, nil, nil)
	in := Object{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata":   map[string]any{"name": "cfg", "annotations": map[string]any{"note": "pw is hunter22"}},
		"data": map[string]any{
			"url":               "postgres://u:hunter22@db",
			"hunter22":          "value under a sensitive key",
			"list":              []any{"a", "hunter22", map[string]any{"deep": base64.StdEncoding.EncodeToString([]byte("hunter22"))}},
			"number":            int64(42),
			"(sensitive value)": "collides with the redacted key",
		},
	}
	got, err := Render(r.Object(in))
	if err != nil {
		t.Fatal(err)
	}
	want := `apiVersion: v1
data:
  (sensitive value): collides with the redacted key
  (sensitive value) (2): value under a sensitive key
  list:
  - a
  - (sensitive value)
  - deep: (sensitive value)
  number: 42
  url: postgres://u:(sensitive value)@db
kind: ConfigMap
metadata:
  annotations:
    note: pw is (sensitive value)
  name: cfg
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestRedactor_harvestsOnlyLongSecretValues(t *testing.T) {
	objs := []Object{
		{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s"},
			"data":       map[string]any{"password": base64.StdEncoding.EncodeToString([]byte("long-password"))},
			"stringData": map[string]any{"user": "app", "port": "5432"}},
		{"apiVersion": "example.com/v1", "kind": "Secret", "metadata": map[string]any{"name": "not-core"},
			"stringData": map[string]any{"x": "not-a-core-secret"}},
	}
	got := harvestSecretValues(objs)
	if len(got) != 1 || got[0] != "long-password" {
		t.Errorf("harvested %q, want only the long value of the core Secret", got)
	}
}

// A username is hidden in its Secret, not wherever else it occurs: elasticsearch's chart writes
// "elastic" into its credentials and into the name of every object.
func TestRedactor_leavesUsernamesOfSecretsToTheSecret(t *testing.T) {
	encoded := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	secret := Object{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "elasticsearch-master-credentials"},
		"data": map[string]any{"username": encoded("elastic"), "password": encoded("long-password"), "ADMIN_USER": encoded("administrator"),
			"rootUser": encoded("superuser"), "mongo-root-username": encoded("mongoadmin"), "users": encoded("alice:secret-hash"), "userkey": encoded("not-a-username")}}
	got := harvestSecretValues([]Object{secret})
	slices.Sort(got)
	if want := []string{"alice:secret-hash", "long-password", "not-a-username"}; !slices.Equal(got, want) {
		t.Errorf("harvested %q, want %q: the values of the keys that name a user left out", got, want)
	}
	service := Object{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "elasticsearch-master"},
		"spec": map[string]any{"selector": map[string]any{"app": "elasticsearch-master"}}}
	manifests, err := NewRedactor(nil, testRedactionKey, nil).Manifests([]Object{secret, service}, "ns", nil)
	if err != nil {
		t.Fatal(err)
	}
	if text := manifests["Service/elasticsearch-master"]; !strings.Contains(text, "app: elasticsearch-master") {
		t.Errorf("the Service hides the username inside its names:\n%s", text)
	}
	text := manifests["Secret/elasticsearch-master-credentials"]
	if strings.Contains(text, "elastic\n") || strings.Contains(text, encoded("elastic")) || !strings.Contains(text, "username: (sensitive value hmac:") {
		t.Errorf("the Secret shows its username:\n%s", text)
	}
}

// hmacHex is the hex HMAC-SHA256 of value keyed with key, which a keyed marker shows the first
// characters of.
func hmacHex(key []byte, value string) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(value))
	return hex.EncodeToString(mac.Sum(nil))
}
