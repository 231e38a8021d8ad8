package helmrelease

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	helmkube "helm.sh/helm/v4/pkg/kube"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/readiness"
)

// Whatever strategy Helm asks for, and however it asks, it gets the provider's waiter: Helm's
// own watcher neither reports progress nor fails fast.
func TestGetWaiter_isTheProvidersForEveryStrategy(t *testing.T) {
	client := &contextKubeClient{ctx: context.Background(), waiter: &waiter{}}
	strategies := []helmkube.WaitStrategy{helmkube.StatusWatcherStrategy, helmkube.LegacyStrategy, helmkube.HookOnlyStrategy, ""}
	for _, strategy := range strategies {
		asked := map[string]func() (helmkube.Waiter, error){
			"GetWaiter":            func() (helmkube.Waiter, error) { return client.GetWaiter(strategy) },
			"GetWaiterWithOptions": func() (helmkube.Waiter, error) { return client.GetWaiterWithOptions(strategy) },
		}
		for how, ask := range asked {
			got, err := ask()
			if err != nil {
				t.Fatalf("%s(%q): %v", how, strategy, err)
			}
			ours, ok := got.(*helmWaiter)
			if !ok {
				t.Fatalf("%s(%q) = %T, want the provider's waiter", how, strategy, got)
			}
			if want := strategy == helmkube.HookOnlyStrategy; ours.hooksOnly != want {
				t.Errorf("%s(%q) waits for hooks only: %v, want %v", how, strategy, ours.hooksOnly, want)
			}
		}
	}
}

// hookInfo is the resource.Info Helm builds for a hook.
func hookInfo(ref objectRef) *resource.Info {
	return &resource.Info{Name: ref.Name, Namespace: ref.Namespace, Mapping: &meta.RESTMapping{
		Resource:         ref.Resource,
		GroupVersionKind: schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind),
	}}
}

var hookPodRef = objectRef{
	Resource:   schema.GroupVersionResource{Version: "v1", Resource: "pods"},
	APIVersion: "v1", Kind: "Pod", Namespace: "review", Name: "migrate",
}

const readyHookPod = `
apiVersion: v1
kind: Pod
metadata: {name: migrate, namespace: review}
spec: {restartPolicy: Never, containers: [{name: migrate, image: migrate}]}
status:
  phase: Running
  conditions: [{type: Ready, status: "True"}]
  containerStatuses: [{name: migrate, ready: true, state: {running: {}}}]
`

// A hook Pod is waited for until it has succeeded, as Helm does, not only until it is ready;
// a hook Deployment, which Helm takes as ready once created, is not waited for.
func TestWatchUntilReady_hookPodUntilItSucceeds(t *testing.T) {
	reader := &fakeReader{objects: map[string]*unstructured.Unstructured{
		"migrate": object(t, readyHookPod),
		"web":     object(t, progressingDeployment),
	}}
	polls := 0
	reader.step = func(f *fakeReader) {
		if polls++; polls == 3 {
			f.objects["migrate"].Object["status"] = map[string]any{"phase": "Succeeded"}
		}
	}
	var progress []string
	client := &contextKubeClient{ctx: context.Background(), waiter: &waiter{
		reader: reader, namespace: "review", interval: time.Millisecond,
		progress: func(summary string, _ []readiness.Progress) { progress = append(progress, summary) },
	}}
	waiter, _ := client.GetWaiter(helmkube.HookOnlyStrategy)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client.ctx = ctx
	resources := helmkube.ResourceList{hookInfo(hookPodRef), hookInfo(deploymentRef)}
	if err := waiter.WatchUntilReady(resources, time.Hour); err != nil {
		t.Fatalf("WatchUntilReady: %v", err)
	}
	if polls < 3 {
		t.Errorf("the wait ended after %d polls, while the Pod was still running", polls)
	}
	if len(progress) == 0 || !strings.Contains(progress[0], "Pod/migrate (Running)") {
		t.Errorf("progress = %q, want the running hook Pod named", progress)
	}
}

// A hook Pod that fails fails the hook at once, saying why.
func TestWatchUntilReady_failedHookPod(t *testing.T) {
	failed := object(t, readyHookPod)
	failed.Object["status"] = map[string]any{"phase": "Failed", "reason": "Error", "message": "migration failed"}
	client := &contextKubeClient{ctx: context.Background(), waiter: &waiter{
		reader: &fakeReader{objects: map[string]*unstructured.Unstructured{"migrate": failed}}, namespace: "review", interval: time.Millisecond,
	}}
	waiter, _ := client.GetWaiter(helmkube.StatusWatcherStrategy)
	err := waiter.WatchUntilReady(helmkube.ResourceList{hookInfo(hookPodRef)}, time.Hour)
	var failure *FailedError
	if !errors.As(err, &failure) || !strings.Contains(err.Error(), "Pod/migrate: Error: pod migrate failed: migration failed") {
		t.Errorf("WatchUntilReady of a failed hook Pod = %v, want a *FailedError naming it", err)
	}
}

// objectInfo is the resource.Info Helm builds for obj, named by ref.
func objectInfo(ref objectRef, obj *unstructured.Unstructured) *resource.Info {
	info := hookInfo(ref)
	info.Object = obj
	return info
}

// Update hands leaveToOthers each target with its object in the revision Helm moves from,
// as that revision recorded it (not as the adoption of client-side fields reads it live), and
// nil for an object new in this revision or adopted by an install.
func TestUpdate_leaveToOthersGetsThePreviousRevision(t *testing.T) {
	configRef := objectRef{Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, APIVersion: "v1", Kind: "ConfigMap", Namespace: "review", Name: "settings"}
	image := func(obj map[string]any) any {
		if obj == nil {
			return nil
		}
		containers, _, _ := unstructured.NestedSlice(obj, "spec", "template", "spec", "containers")
		return containers[0].(map[string]any)["image"]
	}
	deployment := func(tag string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web", "namespace": "review"},
			"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": "web:" + tag}}}}}}}
	}
	config := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "settings", "namespace": "review"}}}
	upgrading := func(helmkube.ResourceList) helmkube.ResourceList {
		return helmkube.ResourceList{objectInfo(deploymentRef, deployment("1.25.0"))}
	}
	// Helm's install hands shallow copies of its targets as the objects to adopt.
	adopting := func(targets helmkube.ResourceList) helmkube.ResourceList {
		var out helmkube.ResourceList
		for _, target := range targets {
			adopted := *target
			out = append(out, &adopted)
		}
		return out
	}
	tests := []struct {
		name      string
		originals func(targets helmkube.ResourceList) helmkube.ResourceList
		want      []any
	}{
		{name: "upgrade", originals: upgrading, want: []any{"web:1.25.0", nil}},
		{name: "install adopting existing objects", originals: adopting, want: []any{nil, nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			targets := helmkube.ResourceList{objectInfo(deploymentRef, deployment("1.26.0")), objectInfo(configRef, config.DeepCopy())}
			var previous, live []map[string]any
			client := &contextKubeClient{ctx: context.Background(), waiter: &waiter{reader: &fakeReader{objects: map[string]*unstructured.Unstructured{"web": deployment("patched")}}}}
			client.leaveToOthers = func(desired, prev, l []map[string]any) []map[string]any {
				previous, live = prev, l
				return desired
			}
			if err := client.yieldFields(targets, previousObjects(tt.originals(targets), targets)); err != nil {
				t.Fatal(err)
			}
			if len(previous) != 2 || image(previous[0]) != tt.want[0] || (previous[1] == nil) != (tt.want[1] == nil) {
				t.Errorf("previous = %v, want the images %v", previous, tt.want)
			}
			if len(live) != 2 || image(live[0]) != "web:patched" || live[1] != nil {
				t.Errorf("live = %v, want the live Deployment and no ConfigMap", live)
			}
		})
	}
}

// A ref of Helm's resource list says whether its object may be one of Helm's records, from the
// object Helm built: a Secret of their type, or one Helm did not build as an object, may.
func TestRefOf_saysWhichSecretsMayBeHelmsRecords(t *testing.T) {
	info := func(obj map[string]any) *resource.Info {
		i := &resource.Info{Namespace: "review-1", Name: "s", Mapping: &meta.RESTMapping{
			Resource:         secrets,
			GroupVersionKind: schema.GroupVersionKind{Version: "v1", Kind: "Secret"},
		}}
		if obj != nil {
			i.Object = &unstructured.Unstructured{Object: obj}
		}
		return i
	}
	for _, tc := range []struct {
		obj  map[string]any
		want bool
	}{
		{map[string]any{"apiVersion": "v1", "kind": "Secret"}, true},
		{map[string]any{"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls"}, true},
		{map[string]any{"apiVersion": "v1", "kind": "Secret", "type": recordType}, false},
		{nil, false},
	} {
		if got := refOf(info(tc.obj)).NotRecord; got != tc.want {
			t.Errorf("refOf(%v).NotRecord = %v, want %v", tc.obj, got, tc.want)
		}
	}
}
