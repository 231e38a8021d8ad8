package kube

import (
	"crypto/sha512"
	"encoding/hex"
	"os"
	"strings"
	"testing"
)

func sha512Hex(b []byte) string {
	sum := sha512.Sum512(b)
	return strings.ToUpper(hex.EncodeToString(sum[:]))
}

func TestServerIdentity_keyTellsServersApart(t *testing.T) {
	base := serverIdentity{Host: "https://kas.example:443/k8s-proxy", TLSServerName: "", CA: []byte("ca-1"), Version: "v1.37.2"}
	variants := map[string]serverIdentity{
		"another host":        {Host: "https://kas.example:8443/k8s-proxy", CA: base.CA, Version: base.Version},
		"another server name": {Host: base.Host, TLSServerName: "kubernetes", CA: base.CA, Version: base.Version},
		"another CA":          {Host: base.Host, CA: []byte("ca-2"), Version: base.Version},
		"another version":     {Host: base.Host, CA: base.CA, Version: "v1.37.3"},
		// The parts must not run together: host "…/k8s-proxyv1" with no version is not the same.
		"parts shifted": {Host: base.Host + "ca-1", CA: nil, Version: base.Version},
	}
	if base.key() != (serverIdentity{Host: base.Host, CA: []byte("ca-1"), Version: "v1.37.2"}).key() {
		t.Fatal("the same identity gave two keys")
	}
	for name, other := range variants {
		if other.key() == base.key() {
			t.Errorf("%s: same key %s as the base identity", name, base.key())
		}
	}
}

func TestDocumentHash(t *testing.T) {
	hash := sha512Hex([]byte("doc"))
	for _, tc := range []struct {
		url  string
		want string
		ok   bool
	}{
		{"/openapi/v3/apis/apps/v1?hash=" + hash, hash, true},
		{"/openapi/v3/api/v1?hash=" + strings.ToLower(hash), hash, true},
		{"/openapi/v3/apis/apps/v1", "", false},
		{"/openapi/v3/apis/apps/v1?hash=014fbff9a07c", "", false},
		{"/openapi/v3/apis/apps/v1?hash=" + strings.Repeat("Z", 128), "", false},
	} {
		got, ok := documentHash(tc.url)
		if got != tc.want || ok != tc.ok {
			t.Errorf("documentHash(%q) = %q, %v; want %q, %v", tc.url, got, ok, tc.want, tc.ok)
		}
	}
}

func TestDocumentCache_servesOnlyTheHashedBytesOfItsServer(t *testing.T) {
	root := t.TempDir()
	clusterA := serverIdentity{Host: "https://127.0.0.1:6443", CA: []byte("ca-a"), Version: "v1.37.2"}
	clusterB := serverIdentity{Host: "https://127.0.0.1:6443", CA: []byte("ca-b"), Version: "v1.37.2"}
	doc := []byte(`{"openapi":"3.0.0"}`)
	hash := sha512Hex(doc)

	a := newDocumentCache(root, clusterA)
	if _, ok := a.get("apis/apps/v1", hash); ok {
		t.Fatal("an empty cache answered")
	}
	a.put("apis/apps/v1", hash, doc)
	if got, ok := a.get("apis/apps/v1", hash); !ok || string(got) != string(doc) {
		t.Fatalf("get after put = %q, %v; want the document", got, ok)
	}
	if _, ok := newDocumentCache(root, clusterB).get("apis/apps/v1", hash); ok {
		t.Error("another cluster's cache answered with cluster A's document")
	}
	if _, ok := a.get("apis/apps/v1", sha512Hex([]byte("changed"))); ok {
		t.Error("a document of another hash (a CRD changed since) was served")
	}

	// A file that no longer has its hash (cut short, edited) is never served.
	if err := os.WriteFile(a.path("apis/apps/v1", hash), doc[:5], 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.get("apis/apps/v1", hash); ok {
		t.Error("a document cut short was served")
	}

	// Bytes that do not have the hash they are put under are not stored.
	a.put("api/v1", hash, []byte("other bytes"))
	if _, err := os.Stat(a.path("api/v1", hash)); !os.IsNotExist(err) {
		t.Errorf("a document put under a hash it does not have was stored (stat: %v)", err)
	}

	// No folder, no cache.
	none := newDocumentCache("", clusterA)
	none.put("apis/apps/v1", hash, doc)
	if _, ok := none.get("apis/apps/v1", hash); ok {
		t.Error("the disabled cache answered")
	}
}
