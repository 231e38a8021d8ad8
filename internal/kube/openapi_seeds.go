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
	"regexp"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/validate"
)

// seeds holds the OpenAPI v3 documents of the built-in group versions of the Kubernetes
// versions this provider ships with, as their API servers publish them (gzipped JSON, written
// by scripts/openapi-seeds.sh). A built-in document's content depends only on the server's
// minor version, not on the cluster, so one published with a hash found here is read from the
// binary instead of downloaded: through the GitLab agent's tunnel the documents of api/v1,
// apps/v1 and policy/v1 are 2.4 MB, about a second at 20 Mbit/s. The hash is the content's, so
// a seed answers only for exactly the bytes the server publishes; any other document (another
// version's, a CRD's) is downloaded. Beside each seed lies its index (seedIndexName), which says
// where its definitions and kinds are, so a plan reads the document without a pass over it.
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

// seeded returns the shipped document of gvPath whose content has hash, with its index when
// one is shipped and reads, or false when no version ships it (or its bytes, against all odds,
// do not have the hash).
func seeded(gvPath, hash string) ([]byte, *validate.DocumentIndex, bool) {
	return seededIn(seeds, gvPath, hash)
}

func seededIn(fsys fs.FS, gvPath, hash string) ([]byte, *validate.DocumentIndex, bool) {
	matches, err := fs.Glob(fsys, "seeds/*/"+seedName(gvPath, strings.ToUpper(hash)))
	if err != nil || len(matches) == 0 {
		return nil, nil, false
	}
	for _, m := range matches {
		if b, err := readSeed(fsys, m); err == nil && hasHash(b, hash) {
			return b, readSeedIndex(fsys, seedIndexName(m)), true
		}
	}
	return nil, nil, false
}

// readSeedIndex returns the index in the file name, or nil when there is none that reads: the
// document is then read whole.
func readSeedIndex(fsys fs.FS, name string) *validate.DocumentIndex {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil
	}
	var index validate.DocumentIndex
	if err := json.Unmarshal(b, &index); err != nil {
		return nil
	}
	return &index
}

func readSeed(fsys fs.FS, name string) ([]byte, error) {
	z, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, err
	}
	r, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil, err
	}
	defer func() { _ = r.Close() }()
	// The gzip trailer's last four bytes hold the content's length: read it into one buffer of
	// that size rather than into one grown step by step, each step a fresh copy (a new
	// process's memory costs a page fault per page it touches first).
	if len(z) < 4 {
		return nil, io.ErrUnexpectedEOF
	}
	b := make([]byte, binary.LittleEndian.Uint32(z[len(z)-4:]))
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, err
	}
	// The content ends there, and its checksum holds (checked when the end is read).
	if n, err := r.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		return nil, fmt.Errorf("%s: longer than its gzip trailer says", name)
	}
	return b, nil
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
