package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
)

// The OpenAPI documents one provider process downloads are kept on disk for the next, and the
// folder never decides a plan: a warm folder serves the same document again without a
// download, a changed definition is downloaded under its new hash, a file whose bytes are not
// those of its hash (here: the definition's old schema) is downloaded again instead of being
// believed, and a deleted folder only costs the download.
func TestAccRelease_openAPIDocumentsKeptOnDiskAreNeverStale(t *testing.T) {
	e := testAccRelease(t)
	group := e.namespace + ".gitlabk8s.test"
	installPartDefinition(t, e, group)
	cli := newTerraformCLI(t, suiteCLI(t))
	cacheDir := t.TempDir()
	cli.env = append(cli.env, envCacheDir+"="+cacheDir)
	cli.writeConfig(checksApplied(e.namespace, fmt.Sprintf(`"installedKind.group" = %q, "installedKind.colour" = "red"`, group)))
	refused := func(stage string) {
		t.Helper()
		out, err := cli.run("plan")
		if err == nil || !strings.Contains(out, ".spec.colour: field not declared in schema") {
			t.Fatalf("%s: the plan did not refuse .spec.colour, which the definition does not declare (err %v):\n%s", stage, err, out)
		}
	}
	accepted := func(stage string) {
		t.Helper()
		out, err := cli.run("plan")
		if err != nil || !strings.Contains(out, "1 to add") {
			t.Fatalf("%s: the plan of .spec.colour, which the definition declares, did not plan the release (err %v):\n%s", stage, err, out)
		}
	}
	documentsOf := func() []string {
		t.Helper()
		files, err := filepath.Glob(filepath.Join(cacheDir, "openapi-v3", "*", "apis_"+group+"_v1-*.json"))
		if err != nil {
			t.Fatal(err)
		}
		return files
	}

	refused("cold folder")
	first := documentsOf()
	if len(first) != 1 {
		t.Fatalf("after the first plan the folder holds %d documents of %s/v1, want 1: %v", len(first), group, first)
	}
	before := inodeOf(t, first[0])
	oldSchema, err := os.ReadFile(first[0])
	if err != nil {
		t.Fatal(err)
	}
	refused("warm folder")
	if after := inodeOf(t, first[0]); after != before {
		t.Errorf("the warm plan wrote %s again (inode %d, was %d): it downloaded the document instead of reading it", first[0], after, before)
	}

	declareColour(t, e, group)
	accepted("definition changed")
	var changed string
	for _, f := range documentsOf() {
		if f != first[0] {
			changed = f
		}
	}
	if changed == "" {
		t.Fatalf("the changed definition's document was not kept under a new hash: %v", documentsOf())
	}
	// The changed definition's file now holds the old schema, which refuses the field.
	if err := os.WriteFile(changed, oldSchema, 0o600); err != nil {
		t.Fatal(err)
	}
	accepted("a file that does not have its hash")
	if b, err := os.ReadFile(changed); err != nil || bytes.Equal(b, oldSchema) {
		t.Errorf("the file that did not have its hash was not replaced by the download (err %v)", err)
	}

	if err := os.RemoveAll(cacheDir); err != nil {
		t.Fatal(err)
	}
	accepted("folder deleted")
	if len(documentsOf()) != 1 {
		t.Errorf("after the plan with the folder deleted it holds %v, want the one document downloaded again", documentsOf())
	}
}

func inodeOf(t *testing.T, path string) uint64 {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Sys().(*syscall.Stat_t).Ino
}

// declareColour adds spec.colour to the Part definition installPartDefinition installed, and
// waits until the API server publishes the schema that declares it.
func declareColour(t *testing.T, e *releaseTestEnv, group string) {
	t.Helper()
	ctx := context.Background()
	published := func(ctx context.Context) string {
		var index struct {
			Paths map[string]struct {
				ServerRelativeURL string `json:"serverRelativeURL"`
			} `json:"paths"`
		}
		b, err := e.kube.Discovery().RESTClient().Get().AbsPath("/openapi/v3").DoRaw(ctx)
		if err != nil || json.Unmarshal(b, &index) != nil {
			return ""
		}
		return index.Paths["apis/"+group+"/v1"].ServerRelativeURL
	}
	before := published(ctx)
	crds := definitionClient(t, e)
	crd, err := crds.Get(ctx, "parts."+group, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	v := versions[0].(map[string]any)
	if err := unstructured.SetNestedField(v, map[string]any{"type": "string"}, "schema", "openAPIV3Schema", "properties", "spec", "properties", "colour"); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedSlice(crd.Object, versions, "spec", "versions"); err != nil {
		t.Fatal(err)
	}
	if _, err := crds.Update(ctx, crd, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The index names the document by its hash, and a plan reads the index first: wait until it
	// names the new document, not only until the document has the field.
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		now := published(ctx)
		if now == "" || now == before {
			return false, nil
		}
		doc, err := e.kube.Discovery().RESTClient().Get().AbsPath(strings.SplitN(now, "?", 2)[0]).DoRaw(ctx)
		return err == nil && strings.Contains(string(doc), `"colour"`), nil
	})
	if err != nil {
		t.Fatalf("the API server never published the schema declaring spec.colour: %v", err)
	}
}
