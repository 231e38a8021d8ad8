package kube

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"flag"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/validate"
)

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Every shipped document is a gzipped JSON document whose content has the hash its name
// gives, in a folder named after a Kubernetes minor version.
func TestSeeds_eachHasTheHashItIsNamedBy(t *testing.T) {
	name := regexp.MustCompile(`^seeds/v1\.[0-9]+/(api_v1|apis_[a-z0-9.-]+_v[0-9a-z]+)-([0-9A-F]{128})\.json\.gz$`)
	var count int
	err := fs.WalkDir(seeds, "seeds", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".index.json") {
			return err
		}
		count++
		m := name.FindStringSubmatch(p)
		if m == nil {
			t.Errorf("%s: not named <group version>-<SHA-512>.json.gz under a version's folder", p)
			return nil
		}
		b, err := readSeed(seeds, p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			return nil
		}
		if !hasHash(b, m[2]) {
			t.Errorf("%s: its content's SHA-512 is %s", p, sha512Hex(b))
		}
		if !bytes.HasPrefix(b, []byte(`{"openapi":"3.`)) {
			t.Errorf("%s: not an OpenAPI v3 document: %.40s", p, b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if count == 0 {
		t.Fatal("no document is shipped")
	}
}

var updateSeedIndexes = flag.Bool("update-seed-indexes", false, "write the index of every shipped OpenAPI document beside it (scripts/openapi-seeds.sh does)")

// Every shipped document has its index beside it, and the index is the document's: reading the
// document by it gives what reading it whole does. Every index has its document.
func TestSeeds_eachHasItsIndex(t *testing.T) {
	docs, err := fs.Glob(seeds, "seeds/*/*.json.gz")
	if err != nil || len(docs) == 0 {
		t.Fatalf("no document is shipped: %v", err)
	}
	for _, p := range docs {
		b, err := readSeed(seeds, p)
		if err != nil {
			t.Fatal(err)
		}
		index, err := validate.IndexDocument(b)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		want, err := json.Marshal(index)
		if err != nil {
			t.Fatal(err)
		}
		if *updateSeedIndexes {
			if err := os.WriteFile(seedIndexName(p), append(want, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := fs.ReadFile(seeds, seedIndexName(p))
		if err != nil {
			t.Errorf("%s has no index: run scripts/openapi-seeds.sh (%v)", p, err)
			continue
		}
		if !bytes.Equal(bytes.TrimSpace(got), want) {
			t.Errorf("%s: its index is not the document's: run scripts/openapi-seeds.sh", seedIndexName(p))
		}
		if _, err := validate.IndexedServerSchema(b, *readSeedIndex(seeds, seedIndexName(p))); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	indexes, err := fs.Glob(seeds, "seeds/*/*.index.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range indexes {
		if _, err := fs.Stat(seeds, strings.TrimSuffix(p, ".index.json")+".json.gz"); err != nil && !*updateSeedIndexes {
			t.Errorf("%s indexes no shipped document", p)
		}
	}
}

// A seed answers for its group version and exactly its hash; a file whose bytes do not have
// the hash of its name answers for nothing.
func TestSeeded_answersOnlyForItsHash(t *testing.T) {
	doc, other := []byte(`{"openapi":"3.0.0","info":{"version":"1.37"}}`), []byte(`{"openapi":"3.0.0","info":{"version":"1.36"}}`)
	hash, otherHash := sha512Hex(doc), sha512Hex(other)
	fsys := fstest.MapFS{
		path.Join("seeds/v1.37", seedName("apis/apps/v1", hash)): {Data: gzipped(t, doc)},
		// Named by one hash, holding another document.
		path.Join("seeds/v1.36", seedName("apis/apps/v1", otherHash)): {Data: gzipped(t, doc)},
	}
	if b, _, ok := seededIn(fsys, "apis/apps/v1", hash); !ok || !bytes.Equal(b, doc) {
		t.Errorf("seeded(apps/v1, its hash) = %q, %v", b, ok)
	}
	if b, _, ok := seededIn(fsys, "apis/apps/v1", strings.ToLower(hash)); !ok || !bytes.Equal(b, doc) {
		t.Errorf("seeded(apps/v1, its hash in lower case) = %q, %v", b, ok)
	}
	for _, tc := range []struct{ gvPath, hash string }{
		{"apis/apps/v1", otherHash},
		{"apis/batch/v1", hash},
		{"api/v1", hash},
	} {
		if b, _, ok := seededIn(fsys, tc.gvPath, tc.hash); ok {
			t.Errorf("seeded(%s, %.12s) = %q, want none", tc.gvPath, tc.hash, b)
		}
	}
}

// newestAPIv1Hash is the hash of the api/v1 document of the newest Kubernetes version shipped.
func newestAPIv1Hash(b *testing.B) string {
	b.Helper()
	matches, err := fs.Glob(seeds, "seeds/*/api_v1-*.json.gz")
	if err != nil || len(matches) == 0 {
		b.Fatalf("no api/v1 document is shipped: %v", err)
	}
	name := path.Base(matches[len(matches)-1])
	return strings.TrimSuffix(strings.TrimPrefix(name, "api_v1-"), ".json.gz")
}

// BenchmarkSeeded reads the largest shipped document, api/v1 (1.6 MB of JSON), from the
// binary: what a plan pays instead of downloading it.
func BenchmarkSeeded(b *testing.B) {
	hash := newestAPIv1Hash(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, ok := seeded("api/v1", hash); !ok {
			b.Fatal("not seeded")
		}
	}
}

// BenchmarkSeededSchema reads the largest shipped document, api/v1, into the schema a plan
// checks objects against: read whole, as a document without an index is, and by its index.
func BenchmarkSeededSchema(b *testing.B) {
	hash := newestAPIv1Hash(b)
	for _, byIndex := range []bool{false, true} {
		b.Run(map[bool]string{false: "whole", true: "indexed"}[byIndex], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				doc, index, ok := seeded("api/v1", hash)
				if !ok || index == nil {
					b.Fatal("not seeded with an index")
				}
				var err error
				if byIndex {
					_, err = validate.IndexedServerSchema(doc, *index)
				} else {
					_, err = validate.ParseServerSchema(doc)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A seed is read into a buffer of the length its gzip trailer gives; a trailer that says less
// or more than the content holds, or a content cut short, is refused, not read in part.
func TestReadSeed_refusesWhatItsTrailerMisstates(t *testing.T) {
	doc := []byte(`{"openapi":"3.0.0","info":{"version":"1.37"},"paths":{}}`)
	z := gzipped(t, doc)
	withLength := func(n uint32) []byte {
		b := bytes.Clone(z)
		binary.LittleEndian.PutUint32(b[len(b)-4:], n)
		return b
	}
	fsys := fstest.MapFS{
		"right":   {Data: z},
		"shorter": {Data: withLength(uint32(len(doc) - 1))},
		"longer":  {Data: withLength(uint32(len(doc) + 1))},
		"empty":   {Data: withLength(0)},
		"cut":     {Data: z[:len(z)-12]},
		"tiny":    {Data: z[:3]},
	}
	if b, err := readSeed(fsys, "right"); err != nil || !bytes.Equal(b, doc) {
		t.Errorf("readSeed(right) = %q, %v; want the document", b, err)
	}
	for _, name := range []string{"shorter", "longer", "empty", "cut", "tiny"} {
		if b, err := readSeed(fsys, name); err == nil {
			t.Errorf("readSeed(%s) = %q, want an error", name, b)
		}
	}
}
