package readiness

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chart"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chartserver"
)

// BenchmarkEvaluate evaluates the generated fixture chart's objects (a
// quarter of them Deployments of two replicas, mid-rollout) with two pods
// per Deployment, as a wait loop does on every poll.
func BenchmarkEvaluate(b *testing.B) {
	loaded, err := chart.Load(context.Background(), chart.Source{Chart: chartserver.FixtureChart("generated")})
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{10, 100, 1000} {
		rendered, err := chart.Render(context.Background(), loaded, map[string]any{"count": n}, chart.RenderOptions{ReleaseName: "bench", Namespace: "review-x"})
		if err != nil {
			b.Fatal(err)
		}
		objects, pods := liveState(rendered)
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				result := Evaluate(Input{Objects: objects, Pods: pods})
				if result.Ready || len(result.Failures) != 0 {
					b.Fatalf("ready %v, failures %v", result.Ready, result.Failures)
				}
			}
		})
	}
}

// liveState gives the rendered objects the namespace and status a cluster
// would, and every Deployment two pods of its current ReplicaSet, one ready.
func liveState(rendered *chart.Rendered) (objects, pods []*unstructured.Unstructured) {
	for _, obj := range rendered.Objects {
		u := &unstructured.Unstructured{Object: obj}
		u.SetNamespace("review-x")
		u.SetGeneration(1)
		objects = append(objects, u)
		if u.GetKind() != "Deployment" {
			continue
		}
		replicaSet := u.GetName() + "-5d8f7c9b6"
		u.Object["status"] = map[string]any{
			"observedGeneration": int64(1),
			"replicas":           int64(2),
			"updatedReplicas":    int64(2),
			"readyReplicas":      int64(1),
			"availableReplicas":  int64(1),
			"conditions": []any{
				map[string]any{"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated", "message": `ReplicaSet "` + replicaSet + `" is progressing.`},
			},
		}
		app, _, _ := unstructured.NestedString(u.Object, "spec", "selector", "matchLabels", "app")
		for i, ready := range []bool{true, false} {
			state := map[string]any{"running": map[string]any{}}
			if !ready {
				state = map[string]any{"waiting": map[string]any{"reason": "ContainerCreating"}}
			}
			pods = append(pods, &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "v1",
				"kind":       "Pod",
				"metadata": map[string]any{
					"name":      fmt.Sprintf("%s-%d", replicaSet, i),
					"namespace": "review-x",
					"labels":    map[string]any{"app": app, "pod-template-hash": "5d8f7c9b6"},
					"ownerReferences": []any{map[string]any{
						"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": replicaSet, "uid": "u", "controller": true,
					}},
				},
				"status": map[string]any{
					"phase":             "Running",
					"containerStatuses": []any{map[string]any{"name": "app", "ready": ready, "state": state}},
				},
			}})
		}
	}
	return objects, pods
}
