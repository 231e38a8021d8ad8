package kube

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"flag"
	"io"
	"io/fs"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/validate"
)

// readSeed returns the whole document in the file name: its pieces one after another, each
// checksum checked.
func readSeed(fsys fs.FS, name string) ([]byte, error) {
	z, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, err
	}
	r, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}

// whole returns the whole document, every piece read.
func (d *seedDocument) whole() ([]byte, error) {
	return d.rangeOf(0, d.size)
}

// seedPieces returns doc as a shipped file holds it, gzip members of seedPiece bytes of it
// each, and where each member lies (seedIndex.Pieces).
func seedPieces(t *testing.T, doc []byte) ([]byte, [][2]int) {
	t.Helper()
	var z bytes.Buffer
	var pieces [][2]int
	for off := 0; off < len(doc); off += seedPiece {
		pieces = append(pieces, [2]int{z.Len(), off})
		w, err := gzip.NewWriterLevel(&z, gzip.BestCompression)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(doc[off:min(off+seedPiece, len(doc))]); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return z.Bytes(), pieces
}

// piecesOf returns where the gzip members of z lie, in z and in the document they hold.
func piecesOf(z []byte) ([][2]int, error) {
	in := bytes.NewReader(z)
	var pieces [][2]int
	var r *gzip.Reader
	for off := 0; in.Len() > 0; {
		at := len(z) - in.Len()
		var err error
		if r == nil {
			r, err = gzip.NewReader(in)
		} else {
			err = r.Reset(in)
		}
		if err != nil {
			return nil, err
		}
		r.Multistream(false)
		n, err := io.Copy(io.Discard, r)
		if err != nil {
			return nil, err
		}
		pieces = append(pieces, [2]int{at, off})
		off += int(n)
	}
	return pieces, nil
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
		if *updateSeedIndexes {
			z, pieces := seedPieces(t, b)
			want, err := json.Marshal(seedIndex{DocumentIndex: index, Pieces: pieces})
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, z, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(seedIndexName(p), append(want, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		z, err := fs.ReadFile(seeds, p)
		if err != nil {
			t.Fatal(err)
		}
		pieces, err := piecesOf(z)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		want, err := json.Marshal(seedIndex{DocumentIndex: index, Pieces: pieces})
		if err != nil {
			t.Fatal(err)
		}
		got, err := fs.ReadFile(seeds, seedIndexName(p))
		if err != nil {
			t.Errorf("%s has no index: run scripts/openapi-seeds.sh (%v)", p, err)
			continue
		}
		if !bytes.Equal(bytes.TrimSpace(got), want) {
			t.Errorf("%s: its index is not the document's: run scripts/openapi-seeds.sh", seedIndexName(p))
			continue
		}
		// Every definition read piece by piece is the document's.
		doc, _, err := openSeed(seeds, p)
		if err != nil {
			t.Fatal(err)
		}
		if doc.size != len(b) {
			t.Errorf("%s: read piece by piece, %d bytes, want %d", p, doc.size, len(b))
		}
		for name, at := range index.Definitions {
			if got, err := doc.rangeOf(at[0], at[1]); err != nil || !bytes.Equal(got, b[at[0]:at[1]]) {
				t.Errorf("%s: definition %s read piece by piece differs (%v)", p, name, err)
			}
		}
		for i, piece := range pieces {
			if end := min(len(b), piece[1]+seedPiece); i+1 < len(pieces) && pieces[i+1][1] != end {
				t.Errorf("%s: piece %d holds %d bytes, want %d", p, i, pieces[i+1][1]-piece[1], seedPiece)
			}
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

// A shipped document answers for its group version and exactly its hash, in either case; any
// other is not shipped. (That each file's content has the hash it is named by is
// TestSeeds_eachHasTheHashItIsNamedBy's.)
func TestSeededSchema_answersOnlyForItsHash(t *testing.T) {
	hash := strings.TrimSuffix(strings.TrimPrefix(path.Base(shippedFile(t, "apis/apps/v1")), "apis_apps_v1-"), ".json.gz")
	deployment := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	for _, h := range []string{hash, strings.ToLower(hash)} {
		if !shipped("apis/apps/v1", h) {
			t.Errorf("apps/v1 with hash %.12s is not shipped", h)
		}
		s, err := seededSchema("apis/apps/v1", h)
		if err != nil || !s.Defines(deployment) {
			t.Errorf("seededSchema(apps/v1, %.12s) = %v, %v", h, s, err)
		}
	}
	other := strings.Repeat("0", len(hash))
	for _, tc := range []struct{ gvPath, hash string }{
		{"apis/apps/v1", other},
		{"apis/batch/v1", hash},
		{"api/v1", hash},
	} {
		if shipped(tc.gvPath, tc.hash) {
			t.Errorf("%s with hash %.12s is shipped", tc.gvPath, tc.hash)
		}
		if s, err := seededSchema(tc.gvPath, tc.hash); err == nil {
			t.Errorf("seededSchema(%s, %.12s) = %v, want an error", tc.gvPath, tc.hash, s)
		}
	}
}

// BenchmarkSeededSchema reads the shipped documents of the group versions of the kinds
// charts hold most (api/v1, the largest at 1.6 MB of JSON, apps/v1 and policy/v1) into the
// schemas a plan checks objects against, and builds the check of a ConfigMap, Secret, Service,
// ServiceAccount, Deployment and PodDisruptionBudget: what a plan pays instead of downloading
// the documents. "whole" reads each document whole and parses it, as one without an index is.
func BenchmarkSeededSchema(b *testing.B) {
	type document struct {
		gvPath, file string
		gv           schema.GroupVersion
		kinds        []string
	}
	docs := []*document{
		{gvPath: "api/v1", gv: schema.GroupVersion{Version: "v1"}, kinds: []string{"ConfigMap", "Secret", "Service", "ServiceAccount"}},
		{gvPath: "apis/apps/v1", gv: schema.GroupVersion{Group: "apps", Version: "v1"}, kinds: []string{"Deployment"}},
		{gvPath: "apis/policy/v1", gv: schema.GroupVersion{Group: "policy", Version: "v1"}, kinds: []string{"PodDisruptionBudget"}},
	}
	var objs []validate.Object
	for _, d := range docs {
		d.file = shippedFile(b, d.gvPath)
		for _, kind := range d.kinds {
			objs = append(objs, validate.Object{Key: kind, Object: map[string]any{"apiVersion": d.gv.String(), "kind": kind, "metadata": map[string]any{"name": "a"}}})
		}
	}
	for _, whole := range []bool{false, true} {
		b.Run(map[bool]string{false: "by-index", true: "whole"}[whole], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				server := map[schema.GroupVersion]*validate.ServerSchema{}
				for _, d := range docs {
					var s *validate.ServerSchema
					var err error
					if whole {
						var doc []byte
						if doc, err = readSeed(seeds, d.file); err == nil {
							s, err = validate.ParseServerSchema(doc)
						}
					} else {
						hash := strings.TrimSuffix(strings.TrimPrefix(path.Base(d.file), strings.TrimSuffix(seedName(d.gvPath, ""), ".json.gz")), ".json.gz")
						s, err = seededSchema(d.gvPath, hash)
					}
					if err != nil {
						b.Fatal(err)
					}
					server[d.gv] = s
				}
				if _, errs := (validate.Options{Server: server}).Prepared(objs); len(errs) > 0 {
					b.Fatal(errs)
				}
			}
		})
	}
}

// A shipped document whose index misplaces a piece, or whose piece is not as long as the
// index and its trailer say, is refused when it is opened or when that piece is read: never
// read in part, or as other bytes.
func TestSeedDocument_refusesAPieceThatMisstatesItself(t *testing.T) {
	unit := []byte(`{"openapi":"3.0.0","info":{"version":"1.37"}}`)
	doc := bytes.Repeat(unit, 5*seedPiece/2/len(unit)) // three pieces
	z, pieces := seedPieces(t, doc)
	if len(pieces) != 3 {
		t.Fatalf("%d pieces, want 3", len(pieces))
	}
	right, err := newSeedDocument("right", z, pieces)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := right.whole(); err != nil || !bytes.Equal(b, doc) {
		t.Fatalf("whole() = %d bytes, %v; want the document", len(b), err)
	}
	if b, err := right.rangeOf(seedPiece-5, seedPiece+5); err != nil || !bytes.Equal(b, doc[seedPiece-5:seedPiece+5]) {
		t.Errorf("a range across two pieces = %q, %v", b, err)
	}
	moved := func(i, at, by int) [][2]int {
		p := slices.Clone(pieces)
		p[i][at] += by
		return p
	}
	for name, p := range map[string][][2]int{
		"none":                      nil,
		"a second piece first":      pieces[1:],
		"two at one offset":         moved(2, 0, pieces[1][0]-pieces[2][0]),
		"a piece past the file":     moved(2, 0, len(z)),
		"holding fewer than before": moved(2, 1, pieces[1][1]-pieces[2][1]),
	} {
		if _, err := newSeedDocument(name, z, p); err == nil {
			t.Errorf("%s: opened", name)
		}
	}
	trailer := func(n uint32) []byte {
		b := bytes.Clone(z)
		binary.LittleEndian.PutUint32(b[len(b)-4:], n)
		return b
	}
	for name, tc := range map[string]struct {
		z      []byte
		pieces [][2]int
	}{
		"a piece said to hold a byte more":   {z, moved(1, 1, 1)},
		"a piece said to hold a byte less":   {z, moved(1, 1, -1)},
		"a piece placed a byte late":         {z, moved(1, 0, 1)},
		"a trailer that says less":           {trailer(uint32(len(doc) - pieces[2][1] - 1)), pieces},
		"a trailer that says more":           {trailer(uint32(len(doc) - pieces[2][1] + 1)), pieces},
		"the file cut short":                 {z[:len(z)-12], pieces},
		"a byte of the second piece changed": {func() []byte { b := bytes.Clone(z); b[pieces[1][0]+40] ^= 0xff; return b }(), pieces},
	} {
		d, err := newSeedDocument(name, tc.z, tc.pieces)
		if err != nil {
			continue // refused when opened
		}
		if b, err := d.whole(); err == nil {
			t.Errorf("%s: read %d bytes, want an error", name, len(b))
		}
	}
}

// Checks built at once (one per set of kinds) read one document's pieces at once: each reads
// what reading it whole gives.
func TestSeedDocument_readsPiecesForSeveralAtOnce(t *testing.T) {
	file, whole := shippedDocument(t, "api/v1")
	doc, index, err := openSeed(seeds, file)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for name, at := range index.Definitions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got, err := doc.rangeOf(at[0], at[1]); err != nil || !bytes.Equal(got, whole[at[0]:at[1]]) {
				t.Errorf("definition %s read at once with others differs (%v)", name, err)
			}
		}()
	}
	wg.Wait()
}

// shippedFile returns the file of a document shipped for gvPath, of the newest server version
// that has one; t fails when none is shipped.
func shippedFile(t testing.TB, gvPath string) string {
	t.Helper()
	files, err := fs.Glob(seeds, "seeds/*/"+seedName(gvPath, "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no %s document is shipped: %v", gvPath, err)
	}
	return files[len(files)-1]
}

// shippedDocument returns the file of a document shipped for gvPath (shippedFile) and the
// document, read whole.
func shippedDocument(t testing.TB, gvPath string) (file string, doc []byte) {
	t.Helper()
	file = shippedFile(t, gvPath)
	doc, err := readSeed(seeds, file)
	if err != nil {
		t.Fatal(err)
	}
	return file, doc
}
