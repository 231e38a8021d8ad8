package manifest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

var benchmarkSizes = []int{10, 100, 1000}

// generatedSensitive are the sensitive values of generated releases.
var generatedSensitive = func() []string {
	values := make([]string, 20)
	for i := range values {
		values[i] = fmt.Sprintf("generated-secret-%02d-Zq8vK", i)
	}
	return values
}()

// generateHelmOutput returns Helm-like output with n objects: Secrets,
// ConfigMaps that quote sensitive values, Deployments and Services in turn.
func generateHelmOutput(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "---\n# Source: app/templates/object-%d.yaml\n", i)
		secret := generatedSensitive[i%len(generatedSensitive)]
		switch i % 4 {
		case 0:
			fmt.Fprintf(&b, "apiVersion: v1\nkind: Secret\nmetadata:\n  name: secret-%d\n  labels:\n    app: app-%d\ntype: Opaque\ndata:\n  password: %s\nstringData:\n  token: %s\n",
				i, i, base64.StdEncoding.EncodeToString([]byte(secret)), secret+"-token")
		case 1:
			fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config-%d\n  annotations:\n    gitlabk8s.io/commit-sha: 0123456789abcdef\ndata:\n  LOG_LEVEL: info\n  app.properties: |\n", i)
			for line := range 20 {
				fmt.Fprintf(&b, "    setting.%d=value %d for object %d\n", line, line, i)
			}
			fmt.Fprintf(&b, "    database.url=postgres://app:%s@db:5432/app\n", secret)
		case 2:
			fmt.Fprintf(&b, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web-%d
  creationTimestamp: null
  labels:
    app.kubernetes.io/name: web-%d
spec:
  replicas: 2
  selector:
    matchLabels:
      app.kubernetes.io/name: web-%d
  template:
    metadata:
      labels:
        app.kubernetes.io/name: web-%d
    spec:
      containers:
        - name: web
          image: registry.example.com/group/web:1.%d.0
          args: ["--listen=:8080", "--verbose"]
          env:
            - name: MODE
              value: production
            - name: EMPTY
              value: null
          ports:
            - containerPort: 8080
          resources:
            limits: {cpu: 500m, memory: 256Mi}
`, i, i, i, i, i)
		default:
			fmt.Fprintf(&b, "apiVersion: v1\nkind: Service\nmetadata:\n  name: svc-%d\nspec:\n  selector:\n    app: app-%d\n  ports:\n    - port: 80\n      targetPort: 8080\n", i, i)
		}
	}
	return b.String()
}

func generatedObjects(b *testing.B, n int) []Object {
	b.Helper()
	objs, err := SplitDocuments(generateHelmOutput(n))
	if err != nil {
		b.Fatal(err)
	}
	return objs
}

// BenchmarkSplitDocuments parses a stream as a new process does ("new"), and as a process that
// parsed its documents before reads them again ("again"), each object a copy of the one
// remembered: what a plan's second rendering does with the documents of its first.
func BenchmarkSplitDocuments(b *testing.B) {
	for _, n := range benchmarkSizes {
		text := generateHelmOutput(n)
		for _, again := range []bool{false, true} {
			name := map[bool]string{false: "new", true: "again"}[again]
			b.Run(fmt.Sprintf("objects=%d/%s", n, name), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(text)))
				ForgetParsed()
				for b.Loop() {
					if !again {
						ForgetParsed()
					}
					if _, err := SplitDocuments(text); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkNormalize(b *testing.B) {
	for _, n := range benchmarkSizes {
		objs := generatedObjects(b, n)
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, obj := range objs {
					Normalize(obj, "review-x", true)
				}
			}
		})
	}
}

func BenchmarkRedact(b *testing.B) {
	r := NewRedactor(generatedSensitive, nil, nil)
	for _, n := range benchmarkSizes {
		objs := generatedObjects(b, n)
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, obj := range objs {
					r.Object(obj)
				}
			}
		})
	}
}

func BenchmarkDiff(b *testing.B) {
	for _, n := range benchmarkSizes {
		objs := generatedObjects(b, n)
		before, err := Manifests(objs, "review-x", nil)
		if err != nil {
			b.Fatal(err)
		}
		// Change one line in every tenth manifest, delete one, add one.
		after := make(map[string]string, len(before))
		i := 0
		for key, text := range before {
			if i%10 == 0 {
				text = strings.Replace(text, "name:", "name: changed-", 1)
			}
			after[key] = text
			i++
		}
		after["ConfigMap/added"] = "apiVersion: v1\nkind: ConfigMap\n"
		delete(after, "Service/svc-3")
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				DiffManifests(before, after)
			}
		})
	}
}

// BenchmarkManifests writes every object, as a new process does.
func BenchmarkManifests(b *testing.B) {
	for _, n := range benchmarkSizes {
		objs := generatedObjects(b, n)
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ForgetWritten()
				if _, err := Manifests(objs, "review-x", nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkManifests_refreshThenPlan writes a release's objects twice in one process, as a
// refresh and the plan after it do, with one object changed in between.
func BenchmarkManifests_refreshThenPlan(b *testing.B) {
	for _, n := range benchmarkSizes {
		live := generatedObjects(b, n)
		rendered := generatedObjects(b, n)
		rendered[n/2]["metadata"].(map[string]any)["labels"] = map[string]any{"changed": "yes"}
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ForgetWritten()
				for _, objs := range [][]Object{live, rendered} {
					if _, err := Manifests(objs, "review-x", nil); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

func TestGenerateHelmOutput_isValidInput(t *testing.T) {
	objs, err := SplitDocuments(generateHelmOutput(8))
	if err != nil {
		t.Fatal(err)
	}
	manifests, err := NewRedactor(generatedSensitive, nil, nil).Manifests(objs, "review-x", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(manifests) != 8 {
		t.Errorf("got %d manifests, want 8", len(manifests))
	}
	out := joinManifests(manifests)
	for _, secret := range generatedSensitive[:8] {
		if strings.Contains(out, secret) {
			t.Errorf("generated output leaks %q", secret)
		}
	}
}

// BenchmarkRememberWritten takes a release's text record as a process does before it renders:
// the record read from JSON, then every text of the state hashed and taken.
func BenchmarkRememberWritten(b *testing.B) {
	for _, n := range benchmarkSizes {
		objs := generatedObjects(b, n)
		ForgetWritten()
		manifests, err := Manifests(objs, "review-x", nil)
		if err != nil {
			b.Fatal(err)
		}
		rec, ok := RecordWritten(manifests, "build")
		if !ok {
			b.Fatal("no text recorded")
		}
		data, err := json.Marshal(rec)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var got TextRecord
				if err := json.Unmarshal(data, &got); err != nil {
					b.Fatal(err)
				}
				if taken := RememberWritten(manifests, got, "build"); taken != n {
					b.Fatalf("took %d texts, want %d", taken, n)
				}
			}
		})
	}
}
