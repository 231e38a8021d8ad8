package helmrelease

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	rcommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/kube"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/testcluster"
)

// listedSecrets is a client's reader that records the field selector of each LIST of Secrets.
type listedSecrets struct {
	dynamicReader
	capturedLines
}

func (r *listedSecrets) List(ctx context.Context, resource schema.GroupVersionResource, namespace, fieldSelector string) (map[string]*unstructured.Unstructured, error) {
	if resource == secrets {
		r.log(fieldSelector)
	}
	return r.dynamicReader.List(ctx, resource, namespace, fieldSelector)
}

// A release's Secrets are read with a LIST that leaves Helm's records out of the namespace's
// Secrets (a revision's whole chart and manifest each), unless one of them may be of their type:
// then the LIST reads them all, and the release's own Secret of that type is found.
func TestLiveObjects_leavesHelmsRecordsOutOfTheSecretsItLists(t *testing.T) {
	ctx, cluster := testcluster.ForTest(t)
	clients, err := kube.NewConnection(kube.Options{ConfigPath: cluster.Kubeconfig, Context: cluster.AdminContext}).Clients(ctx)
	if err != nil {
		t.Fatal(err)
	}
	kc := clients.Kubernetes
	namespace := clusterNamespace(ctx, t, kc, "live-secrets")
	store := driver.NewSecrets(kc.CoreV1().Secrets(namespace))
	for v := 1; v <= 3; v++ {
		rel := &release.Release{Name: "app", Namespace: namespace, Version: v, Chart: testChart(), Config: map[string]any{},
			Manifest: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n",
			Info:     &release.Info{Status: rcommon.StatusSuperseded, Description: "stored by the test"}}
		if err := store.Create(fmt.Sprintf("sh.helm.release.v1.app.v%d", v), rel); err != nil {
			t.Fatal(err)
		}
	}
	// The release's own Secrets: one of the type of Helm's records among them.
	for name, typ := range map[string]corev1.SecretType{"untyped": "", "opaque": corev1.SecretTypeOpaque, "token": "example.com/token", "own-record": recordType} {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Type: typ, StringData: map[string]string{"k": name}}
		if _, err := kc.CoreV1().Secrets(namespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	c := New(clients, Options{})
	reader := &listedSecrets{dynamicReader: c.reader.(dynamicReader)}
	c.reader = reader
	secret := func(name string, typ ...any) manifest.Object {
		obj := manifest.Object{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": name}}
		if len(typ) > 0 {
			obj["type"] = typ[0]
		}
		return obj
	}
	for _, tc := range []struct {
		name     string
		objs     []manifest.Object
		found    string
		selector string
	}{
		{"no record", []manifest.Object{secret("untyped"), secret("opaque", "Opaque"), secret("token", "example.com/token")},
			"untyped opaque token", notRecords},
		{"one missing", []manifest.Object{secret("untyped"), secret("opaque", "Opaque"), secret("missing", "Opaque")},
			"untyped opaque -", notRecords},
		{"the release's record-typed Secret", []manifest.Object{secret("untyped"), secret("opaque", "Opaque"), secret("own-record", recordType)},
			"untyped opaque own-record", ""},
		{"a type not known", []manifest.Object{secret("untyped"), secret("opaque", "Opaque"), secret("own-record", nil)},
			"untyped opaque own-record", ""},
	} {
		live, err := c.LiveObjects(ctx, namespace, tc.objs)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var found []string
		for _, obj := range live {
			name := "-"
			if obj != nil {
				name = obj["metadata"].(map[string]any)["name"].(string)
			}
			found = append(found, name)
		}
		if got := strings.Join(found, " "); got != tc.found {
			t.Errorf("%s: found %q, want %q", tc.name, got, tc.found)
		}
		if got := reader.take(); !slices.Equal(got, []string{tc.selector}) {
			t.Errorf("%s: LISTs of Secrets with %q, want one with %q", tc.name, got, tc.selector)
		}
	}

	// What the API server answers to each: Helm's records only to the LIST of them all.
	for selector, want := range map[string]string{
		notRecords: "opaque token untyped",
		"":         "opaque own-record sh.helm.release.v1.app.v1 sh.helm.release.v1.app.v2 sh.helm.release.v1.app.v3 token untyped",
	} {
		listed, err := reader.dynamicReader.List(ctx, secrets, namespace, selector)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(slices.Sorted(maps.Keys(listed)), " "); got != want {
			t.Errorf("LIST with %q: %s, want %s", selector, got, want)
		}
	}
}
