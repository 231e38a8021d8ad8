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
	"strings"

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
