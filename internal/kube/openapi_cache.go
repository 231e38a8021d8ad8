package kube

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// DefaultCacheDir is where documents are kept when the configuration names no folder: under
// the user's cache folder ($XDG_CACHE_HOME or ~/.cache on Linux); empty when there is none.
func DefaultCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "gitlabk8s")
}

// documentCache keeps the API server's OpenAPI v3 documents on disk between provider processes:
// Terraform starts the provider more than once for one plan, each process would download the
// same megabytes again, and a CI job can keep the folder between jobs. A document is stored
// under its server's identity and the hash the server publishes it with, and read back only
// when the bytes still have that hash, so the cache answers with exactly what the server
// publishes now or not at all: a CRD changed since gets a new hash and is downloaded.
type documentCache struct {
	// dir holds this server's documents; empty disables the cache.
	dir string
}

// newDocumentCache returns the cache of one API server's documents under root (empty: none).
func newDocumentCache(root string, id serverIdentity) documentCache {
	if root == "" {
		return documentCache{}
	}
	return documentCache{dir: filepath.Join(root, "openapi-v3", id.key())}
}

// serverIdentity is what tells one API server's documents from another's: its address, the CA
// its certificate is checked against and its version. Credentials are never part of it.
type serverIdentity struct {
	Host          string
	TLSServerName string
	CA            []byte
	Version       string
}

// key is a file name for the identity: a hash, so neither the address nor the CA appear in
// the folder's listing.
func (id serverIdentity) key() string {
	h := sha256.New()
	for _, part := range [][]byte{[]byte(id.Host), []byte(id.TLSServerName), id.CA, []byte(id.Version)} {
		// Each part's length first, so no two identities run together into the same bytes.
		fmt.Fprintf(h, "%d:", len(part))
		h.Write(part)
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// documentHash is the content hash in a document's URL (/openapi/v3/apis/apps/v1?hash=...):
// the upper-case hex SHA-512 of the JSON the server serves, as kube-openapi computes it.
// False when the URL carries none, as an API server that predates hashed URLs publishes.
func documentHash(serverRelativeURL string) (string, bool) {
	u, err := url.Parse(serverRelativeURL)
	if err != nil {
		return "", false
	}
	hash := u.Query().Get("hash")
	if len(hash) != sha512.Size*2 {
		return "", false
	}
	if _, err := hex.DecodeString(hash); err != nil {
		return "", false
	}
	return strings.ToUpper(hash), true
}

// path is the file of a document with hash; the group version is in the name only to make
// the folder readable.
func (c documentCache) path(gvPath, hash string) string {
	return filepath.Join(c.dir, strings.ReplaceAll(gvPath, "/", "_")+"-"+hash[:32]+".json")
}

// get returns the stored document of gvPath with hash, or false when there is none or its
// bytes do not have that hash (a file cut short, changed or from another version).
func (c documentCache) get(gvPath, hash string) ([]byte, bool) {
	if c.dir == "" {
		return nil, false
	}
	b, err := os.ReadFile(c.path(gvPath, hash))
	if err != nil || !hasHash(b, hash) {
		return nil, false
	}
	return b, true
}

// put stores a document whose bytes have hash; a document that does not, or a folder that
// cannot be written, is not stored: the cache only saves downloads, it is never needed.
func (c documentCache) put(gvPath, hash string, b []byte) {
	if c.dir == "" || !hasHash(b, hash) {
		return
	}
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return
	}
	// Written aside and renamed, so a concurrent reader (another provider process of the same
	// run) sees the whole document or none.
	f, err := os.CreateTemp(c.dir, ".download-*")
	if err != nil {
		return
	}
	_, werr := f.Write(b)
	cerr := f.Close()
	if werr != nil || cerr != nil || os.Rename(f.Name(), c.path(gvPath, hash)) != nil {
		_ = os.Remove(f.Name())
	}
}

func hasHash(b []byte, hash string) bool {
	sum := sha512.Sum512(b)
	return strings.EqualFold(hex.EncodeToString(sum[:]), hash)
}
