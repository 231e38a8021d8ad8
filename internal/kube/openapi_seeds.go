package kube

import (
	"bytes"
	"compress/gzip"
	"embed"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/validate"
)

// seeds holds the OpenAPI v3 documents of the built-in group versions of the Kubernetes
// versions this provider ships with, as their API servers publish them (JSON gzipped in pieces,
// written by scripts/openapi-seeds.sh). A built-in document's content depends only on the server's
// minor version, not on the cluster, so one published with a hash found here is read from the
// binary instead of downloaded: through the GitLab agent's tunnel the documents of api/v1,
// apps/v1 and policy/v1 are 2.4 MB, about a second at 20 Mbit/s. The hash is the content's, so
// a seed answers only for exactly the bytes the server publishes; any other document (another
// version's, a CRD's) is downloaded. Beside each seed lies its index (seedIndexName), which says
// where its definitions, kinds and pieces are, so a plan decompresses and parses only the
// definitions its kinds reach (a fifth of api/v1 for a ConfigMap, Secret, Service and
// ServiceAccount), without a pass over the document.
//
//go:embed seeds
var seeds embed.FS

// seedName is the file of gvPath's document with hash, under a folder per Kubernetes version.
func seedName(gvPath, hash string) string {
	return strings.ReplaceAll(gvPath, "/", "_") + "-" + hash + ".json.gz"
}

// seedIndexName is the file of the index of the seed named name.
func seedIndexName(name string) string {
	return strings.TrimSuffix(name, ".json.gz") + ".index.json"
}

// seedPiece is the most of a document one piece of its file holds: a plan decompresses only
// the pieces that hold the definitions its kinds reach.
const seedPiece = 128 << 10

// seedIndex is the index shipped beside a document: validate's, and where each piece of the
// file lies.
type seedIndex struct {
	validate.DocumentIndex
	// Pieces holds, for each gzip member of the file in turn, the offset of its first byte in
	// the file and the offset in the document of the first byte it holds. The members one
	// after another are the gzip file of the document (zcat reads it whole).
	Pieces [][2]int `json:"pieces"`
}

// seedFiles lists, by file name, where each shipped document lies (one per Kubernetes
// version that ships it), read once per process.
var seedFiles = sync.OnceValue(func() map[string][]string {
	files := map[string][]string{}
	matches, _ := fs.Glob(seeds, "seeds/*/*.json.gz")
	for _, m := range matches {
		files[path.Base(m)] = append(files[path.Base(m)], m)
	}
	return files
})

// shipped reports whether the document of gvPath with hash is shipped.
func shipped(gvPath, hash string) bool {
	return len(seedFiles()[seedName(gvPath, strings.ToUpper(hash))]) > 0
}

// seededSchema reads the shipped document of gvPath with hash by its index: the document's
// content has the hash its file is named by (TestSeeds_eachHasTheHashItIsNamedBy checks each
// file shipped, and each piece's gzip checksum each piece read), so a server that publishes
// that hash publishes this schema.
func seededSchema(gvPath, hash string) (*validate.ServerSchema, error) {
	files := seedFiles()[seedName(gvPath, strings.ToUpper(hash))]
	if len(files) == 0 {
		return nil, fmt.Errorf("no document of %s with hash %.12s is shipped", gvPath, hash)
	}
	doc, index, err := openSeed(seeds, files[0])
	if err != nil {
		return nil, err
	}
	return validate.ReadIndexedServerSchema(doc.rangeOf, doc.size, index.DocumentIndex)
}

// readSeedIndex returns the index in the file name, or nil when there is none that reads.
func readSeedIndex(fsys fs.FS, name string) *seedIndex {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil
	}
	var index seedIndex
	if err := json.Unmarshal(b, &index); err != nil {
		return nil
	}
	return &index
}

// seedDocument is a shipped document, its pieces decompressed as they are read.
type seedDocument struct {
	name string
	z    []byte
	// pieces are the index's; size is the document's length.
	pieces [][2]int
	size   int

	mu   sync.Mutex
	read map[int][]byte
}

// openSeed opens the shipped document in the file name with its index.
func openSeed(fsys fs.FS, name string) (*seedDocument, *seedIndex, error) {
	index := readSeedIndex(fsys, seedIndexName(name))
	if index == nil {
		return nil, nil, fmt.Errorf("%s: no index", name)
	}
	z, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, nil, err
	}
	doc, err := newSeedDocument(name, z, index.Pieces)
	if err != nil {
		return nil, nil, err
	}
	return doc, index, nil
}

// newSeedDocument checks that pieces can be where they say in z, the file name: the first at
// the start of both, each further along in both than the one before. The document's length is
// the last piece's offset and its length, which its gzip trailer gives.
func newSeedDocument(name string, z []byte, pieces [][2]int) (*seedDocument, error) {
	if len(pieces) == 0 || pieces[0] != [2]int{0, 0} || len(z) < 4 {
		return nil, fmt.Errorf("%s: its index places no piece at its start", name)
	}
	for i := 1; i < len(pieces); i++ {
		if pieces[i][0] <= pieces[i-1][0] || pieces[i][1] <= pieces[i-1][1] || pieces[i][0] >= len(z) {
			return nil, fmt.Errorf("%s: piece %d is not after piece %d", name, i, i-1)
		}
	}
	last := int(binary.LittleEndian.Uint32(z[len(z)-4:]))
	return &seedDocument{name: name, z: z, pieces: pieces, size: pieces[len(pieces)-1][1] + last, read: map[int][]byte{}}, nil
}

// piece returns piece i, decompressed on its first read. A piece whose content is not as
// long as the index and its trailer say, or whose checksum fails, is an error.
func (d *seedDocument) piece(i int) ([]byte, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if b, ok := d.read[i]; ok {
		return b, nil
	}
	zEnd, end := len(d.z), d.size
	if i+1 < len(d.pieces) {
		zEnd, end = d.pieces[i+1][0], d.pieces[i+1][1]
	}
	r, err := gzip.NewReader(bytes.NewReader(d.z[d.pieces[i][0]:zEnd]))
	if err != nil {
		return nil, fmt.Errorf("%s: piece %d: %w", d.name, i, err)
	}
	r.Multistream(false)
	b := make([]byte, end-d.pieces[i][1])
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, fmt.Errorf("%s: piece %d: %w", d.name, i, err)
	}
	// The piece ends there, and its checksum holds (checked when the end is read).
	if n, err := r.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		return nil, fmt.Errorf("%s: piece %d is longer than its index says", d.name, i)
	}
	d.read[i] = b
	return b, nil
}

// rangeOf returns the document's bytes from start to end (a validate.DocumentRange): a
// part of one piece as it is, else the parts of the pieces it spans, joined.
func (d *seedDocument) rangeOf(start, end int) ([]byte, error) {
	if start < 0 || end > d.size || start >= end {
		return nil, fmt.Errorf("%s: bytes %d to %d are not in the document of %d bytes", d.name, start, end, d.size)
	}
	i := sort.Search(len(d.pieces), func(k int) bool { return d.pieces[k][1] > start }) - 1
	var joined []byte
	for at := start; at < end; i++ {
		p, err := d.piece(i)
		if err != nil {
			return nil, err
		}
		off := d.pieces[i][1]
		stop := min(end, off+len(p))
		if joined == nil && stop == end {
			return p[at-off : end-off : end-off], nil
		}
		joined = append(joined, p[at-off:stop-off]...)
		at = stop
	}
	return joined, nil
}

// ServesFieldValidation reports whether the API server is known to validate the fields of gvk's
// objects itself (the fieldValidation parameter of their PATCH) without reading the OpenAPI
// document of gvk's group version: the provider ships that document for the server's
// Kubernetes version, and its index lists gvk among the kinds whose PATCH takes the parameter,
// as kubectl's check reads it (validate.DocumentIndex.FieldValidation). False says only that it
// is not known so. kubectl's field validation, which Helm's Build runs, reads each group
// version's document to learn just that: api/v1's is 1.6 MB, downloaded through the GitLab
// agent's tunnel and parsed whole at every apply. Valid once the probe has answered.
func (c *Clients) ServesFieldValidation(gvk schema.GroupVersionKind) bool {
	return fieldValidatedIn(seeds, c.ServerVersion, gvk)
}

// serverMinor is the folder of a server's gitVersion (v1.37.2, v1.33.5-eks-1a2b) among the
// shipped documents: v1.37.
var serverMinor = regexp.MustCompile(`^v1\.[0-9]+`)

// fieldValidatedKinds memoizes, by Kubernetes version and group version, the kinds the shipped
// index lists as validated by the server (none when none is shipped): Helm's Build asks for
// every object it builds, and a glob of the shipped files costs more than the rest of its check.
var fieldValidatedKinds sync.Map // "v1.37 apis/apps/v1" -> []validate.IndexedGVK

// fieldValidatedIn reports whether fsys ships the document of gvk's group version for the
// Kubernetes version version with an index that lists gvk as validated by the server.
func fieldValidatedIn(fsys fs.FS, version string, gvk schema.GroupVersionKind) bool {
	minor := serverMinor.FindString(version)
	if minor == "" {
		return false
	}
	gvPath := openAPIPath(gvk.GroupVersion())
	key := minor + " " + gvPath
	kinds, ok := fieldValidatedKinds.Load(key)
	if !ok {
		var listed []validate.IndexedGVK
		docs, err := fs.Glob(fsys, "seeds/"+minor+"/"+seedName(gvPath, "*"))
		if err == nil && len(docs) == 1 {
			if index := readSeedIndex(fsys, seedIndexName(docs[0])); index != nil {
				listed = index.FieldValidation
			}
		}
		kinds, _ = fieldValidatedKinds.LoadOrStore(key, listed)
	}
	listed, _ := kinds.([]validate.IndexedGVK)
	return validate.Has(listed, gvk)
}
