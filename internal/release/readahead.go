package release

import (
	"context"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// PrepareRefresh prepares a refresh of the release for in as Prepare does, and reads the
// objects recorded (the state's manifests) while it reads the history: the revision the
// history names as the last holds, but for a change made outside Terraform, the objects the
// state recorded, and through the GitLab agent's tunnel the two reads one after the other
// are two round trips. Read takes what was read ahead and reads only the objects of the last
// revision that were not (liveObjects).
func PrepareRefresh(ctx context.Context, cluster Cluster, in Inputs, recorded *Recorded) *Request {
	expect := recorded.revision()
	if cluster == nil {
		return prepare(ctx, cluster, in, expect)
	}
	ahead := recorded.readAhead()
	if len(ahead) == 0 {
		return prepare(ctx, cluster, in, expect)
	}
	type answer struct {
		live []manifest.Object
		err  error
	}
	read := make(chan answer, 1)
	go func() {
		live, err := cluster.LiveObjects(ctx, in.Namespace, ahead)
		read <- answer{live, err}
	}()
	req := prepare(ctx, cluster, in, expect)
	got := <-read
	if got.err != nil {
		return req // Read reads them again, and says why when that fails too
	}
	req.readAhead = make(map[string]manifest.Object, len(ahead))
	for i, obj := range ahead {
		req.readAhead[req.identity(obj)] = got.live[i]
	}
	return req
}

// readAhead lists the objects of the recorded manifests a refresh reads: what names each in
// the cluster (API version, kind, namespace, name), read from its key and its manifest's
// apiVersion line. Left out are hooks and CustomResourceDefinitions, which a refresh keeps as
// recorded instead of reading, names hidden as sensitive, and any manifest that does not say
// which API version it is of; the refresh reads such objects of the last revision afterwards.
func (rec *Recorded) readAhead() []manifest.Object {
	manifests := rec.manifests()
	var objs []manifest.Object
	for _, key := range slices.Sorted(maps.Keys(manifests)) {
		text := manifests[key]
		named, ok := nameRecorded(key, text)
		if !ok || named.kind == "CustomResourceDefinition" || strings.Contains(text, "helm.sh/hook") || strings.ContainsAny(named.name+named.namespace, " ()") {
			continue
		}
		metadata := map[string]any{"name": named.name}
		if named.namespace != "" {
			metadata["namespace"] = named.namespace
		}
		obj := manifest.Object{"apiVersion": named.apiVersion, "kind": named.kind, "metadata": metadata}
		if named.kind == "Secret" && named.gv.Group == "" {
			secretType(obj, text)
		}
		objs = append(objs, obj)
	}
	return objs
}

// recordedName is what names a recorded manifest in the cluster.
type recordedName struct {
	apiVersion            string
	gv                    schema.GroupVersion
	kind, namespace, name string
}

// nameRecorded reads a recorded manifest's name from its key and its apiVersion line; not ok
// when the key cannot be read, the manifest does not say which API version it is of, or that
// version's group is not the key's.
func nameRecorded(key, text string) (recordedName, bool) {
	kind, group, namespace, name, ok := manifest.ParseKey(key)
	if !ok {
		return recordedName{}, false
	}
	apiVersion, ok := manifest.TopLevelScalar(text, "apiVersion")
	gv, err := schema.ParseGroupVersion(apiVersion)
	if !ok || err != nil || gv.Group != group || gv.Version == "" {
		return recordedName{}, false
	}
	return recordedName{apiVersion: apiVersion, gv: gv, kind: kind, namespace: namespace, name: name}, true
}

// secretType gives obj, a Secret read ahead, its manifest's type, which says whether a LIST
// that leaves Helm's release records out holds it: none when the manifest names none (the
// cluster's default, Opaque), the type when the manifest shows it whole, else nil, which
// says the type is not known: helmrelease's notRecord takes any type that is not a string as
// one that may be Helm's, and reads that Secret with a LIST of them all.
func secretType(obj manifest.Object, text string) {
	if v, ok := manifest.TopLevelScalar(text, "type"); ok && !manifest.HasMarker(v) {
		obj["type"] = v
		return
	}
	if strings.HasPrefix(text, "type:") || strings.Contains(text, "\ntype:") {
		obj["type"] = nil
	}
}

// identity names obj in the cluster: API version, kind, namespace (the release's for a
// namespaced object that names none, none for a cluster-scoped one) and name.
func (r *Request) identity(obj manifest.Object) string {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	metadata, _ := obj["metadata"].(map[string]any)
	name, _ := metadata["name"].(string)
	namespace := ""
	if r.Capabilities.IsNamespaced == nil || r.Capabilities.IsNamespaced(apiVersion, kind) {
		if namespace, _ = metadata["namespace"].(string); namespace == "" {
			namespace = r.Namespace
		}
	}
	return apiVersion + "\x00" + kind + "\x00" + namespace + "\x00" + name
}

// liveObjects returns, for each of objs, the object as it is in the cluster, nil for one that
// does not exist: what was read ahead, and the rest read now.
func (r *Request) liveObjects(ctx context.Context, objs []manifest.Object) ([]manifest.Object, error) {
	if r.readAhead == nil {
		return r.cluster.LiveObjects(ctx, r.Namespace, objs)
	}
	out := make([]manifest.Object, len(objs))
	var rest []manifest.Object
	var restAt []int
	for i, obj := range objs {
		if live, ok := r.readAhead[r.identity(obj)]; ok {
			out[i] = live
			continue
		}
		rest = append(rest, obj)
		restAt = append(restAt, i)
	}
	if len(rest) == 0 {
		return out, nil
	}
	live, err := r.cluster.LiveObjects(ctx, r.Namespace, rest)
	if err != nil {
		return nil, err
	}
	for j, i := range restAt {
		out[i] = live[j]
	}
	return out, nil
}
