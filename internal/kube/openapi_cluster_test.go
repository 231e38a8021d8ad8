package kube

import (
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/validate"
)

// The API server's OpenAPI v3 documents are listed for the group versions asked only, under a
// key that carries their hash, and parse into the schemas the plan checks against.
func TestOpenAPIDocuments_listsTheGroupVersionsAskedFor(t *testing.T) {
	ctx, c := adminClients(t)
	cfg := c.Config
	apps := schema.GroupVersion{Group: "apps", Version: "v1"}
	core := schema.GroupVersion{Version: "v1"}
	docs, err := c.OpenAPIDocuments(ctx, []schema.GroupVersion{apps, {Group: "nothing.gitlabk8s.test", Version: "v1"}, core})
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 2 || docs[0].GroupVersion != apps || docs[1].GroupVersion != core {
		t.Fatalf("documents = %+v, want apps/v1 and v1", docs)
	}
	for _, d := range docs {
		if !strings.HasPrefix(d.Key, cfg.Host+"/openapi/v3/") || !strings.Contains(d.Key, "hash=") {
			t.Errorf("key %q lacks the server or the document's hash", d.Key)
		}
	}
	doc, err := docs[0].Fetch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s, err := validate.ParseServerSchema(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Defines(apps.WithKind("Deployment")) || s.Defines(core.WithKind("Pod")) {
		t.Error("the apps/v1 document does not define Deployment alone")
	}
}

// The API server's documents, each kind parsed with only the definitions it reaches, refuse
// what the shipped schema of the same Kubernetes version refuses, field for field: for the
// kinds charts hold, an undeclared field at the top and in the spec (or a spec where the kind
// has none), and a label of the wrong type.
func TestServerSchemas_agreeWithTheShippedSchemaOfTheirVersion(t *testing.T) {
	ctx, c := adminClients(t)
	info, err := c.Kubernetes.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v, err := validate.ParseVersion(info.GitVersion); err != nil || v != validate.LibraryVersion() {
		t.Skipf("the cluster runs Kubernetes %s, the shipped schema is of %s: their schemas may differ", info.GitVersion, validate.LibraryVersion())
	}
	kinds := map[string][]string{
		"v1":                           {"ConfigMap", "Secret", "Service", "ServiceAccount", "Pod", "PersistentVolumeClaim", "LimitRange", "ResourceQuota"},
		"apps/v1":                      {"Deployment", "StatefulSet", "DaemonSet"},
		"batch/v1":                     {"Job", "CronJob"},
		"policy/v1":                    {"PodDisruptionBudget"},
		"networking.k8s.io/v1":         {"Ingress", "NetworkPolicy"},
		"rbac.authorization.k8s.io/v1": {"Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"},
		"autoscaling/v2":               {"HorizontalPodAutoscaler"},
	}
	var objs []validate.Object
	var gvs []schema.GroupVersion
	for _, apiVersion := range slices.Sorted(maps.Keys(kinds)) {
		gv, _ := schema.ParseGroupVersion(apiVersion)
		gvs = append(gvs, gv)
		for _, kind := range kinds[apiVersion] {
			// One fault per object: structured-merge-diff may stop at the first of several.
			for fault, fields := range map[string]map[string]any{
				"top":   {"bogus": true},
				"spec":  {"spec": map[string]any{"bogus": true}},
				"label": {"metadata": map[string]any{"name": "x", "labels": map[string]any{"app": int64(1)}}},
			} {
				obj := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": "x"}}
				maps.Copy(obj, fields)
				objs = append(objs, validate.Object{Key: kind + " " + fault, Object: obj})
			}
		}
	}
	server, errs := ServerSchemas(ctx, c, gvs)
	if len(errs) > 0 || len(server) != len(gvs) {
		t.Fatalf("schemas of %d group versions, errors %v; want %d", len(server), errs, len(gvs))
	}
	opts, errs := validate.Options{Server: server}.Prepared(objs)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	fromServer, shipped := validate.Check(objs, opts), validate.Check(objs, validate.Options{})
	if len(fromServer) != len(objs) || len(shipped) != len(objs) {
		t.Fatalf("%d findings from the server's schemas and %d from the shipped one; want one per object (%d)", len(fromServer), len(shipped), len(objs))
	}
	for i := range objs {
		s, b := fromServer[i], shipped[i]
		if s.Schema != validate.ClusterSchema || b.Schema != validate.ShippedSchema {
			t.Fatalf("%s: checked against %s and %s", objs[i].Key, s.Schema, b.Schema)
		}
		if len(s.Fields) != 1 || !reflect.DeepEqual(s.Fields, b.Fields) {
			t.Errorf("%s: the server's schema refuses %v, the shipped one %v", objs[i].Key, s.Fields, b.Fields)
		}
	}
}

// The built-in documents of the local cluster, whose Kubernetes version the project pins, are
// read from the binary: listing and reading them all is one request, the index. When the pinned
// version changes, scripts/openapi-seeds.sh writes its documents.
func TestOpenAPIDocuments_theBuiltInDocumentsOfThePinnedVersionAreShipped(t *testing.T) {
	ctx, admin := adminClients(t)
	services, err := dynamic.NewForConfigOrDie(admin.Config).Resource(schema.GroupVersionResource{
		Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices",
	}).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var builtIn []schema.GroupVersion
	for _, s := range services.Items {
		if svc, _, _ := unstructured.NestedMap(s.Object, "spec", "service"); svc != nil {
			continue // an aggregated API
		}
		if s.GetLabels()["kube-aggregator.kubernetes.io/automanaged"] == "true" {
			continue // a CustomResourceDefinition's (another test's, left installed); built-in ones are "onstart"
		}
		group, _, _ := unstructured.NestedString(s.Object, "spec", "group")
		version, _, _ := unstructured.NestedString(s.Object, "spec", "version")
		builtIn = append(builtIn, schema.GroupVersion{Group: group, Version: version})
	}
	var requests []string
	var mu sync.Mutex
	cfg := rest.CopyConfig(admin.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			mu.Lock()
			requests = append(requests, req.URL.Path)
			mu.Unlock()
			return rt.RoundTrip(req)
		})
	})
	c := &Clients{Config: cfg, Kubernetes: kubernetes.NewForConfigOrDie(cfg)}
	docs, err := c.OpenAPIDocuments(ctx, builtIn)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != len(builtIn) || len(docs) < 20 {
		t.Fatalf("%d documents for %d built-in group versions", len(docs), len(builtIn))
	}
	for _, d := range docs {
		if d.Shipped == nil {
			t.Errorf("%s: not shipped: run scripts/openapi-seeds.sh", d.GroupVersion)
			continue
		}
		if _, err := d.Shipped(); err != nil {
			t.Errorf("%s: %v", d.GroupVersion, err)
		}
		hash, _ := documentHash(strings.TrimPrefix(d.Key, cfg.Host))
		files := seedFiles()[seedName(openAPIPath(d.GroupVersion), hash)]
		if len(files) == 0 {
			t.Errorf("%s: no file holds the document with the hash the server publishes", d.GroupVersion)
			continue
		}
		if b, err := readSeed(seeds, files[0]); err != nil || !hasHash(b, hash) {
			t.Errorf("%s: the document shipped does not have the hash the server publishes (%v)", d.GroupVersion, err)
		}
	}
	if !reflect.DeepEqual(requests, []string{"/openapi/v3"}) {
		t.Errorf("reading the built-in documents made the requests %v, want only the index: run scripts/openapi-seeds.sh", requests)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
