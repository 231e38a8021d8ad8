package helmrelease

import (
	"testing"

	helmkube "helm.sh/helm/v4/pkg/kube"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestCascade_propagation(t *testing.T) {
	for cascade, want := range map[Cascade]metav1.DeletionPropagation{
		CascadeBackground: metav1.DeletePropagationBackground,
		CascadeForeground: metav1.DeletePropagationForeground,
		CascadeOrphan:     metav1.DeletePropagationOrphan,
	} {
		if got := cascade.propagation(); got != want {
			t.Errorf("%s.propagation() = %s, want %s", cascade, got, want)
		}
	}
}

func TestKeptByPolicy_asHelmReadsIt(t *testing.T) {
	for policy, want := range map[string]bool{"": false, "keep": true, " Keep ": true, "delete": false} {
		obj := &unstructured.Unstructured{Object: map[string]any{}}
		if policy != "" {
			obj.SetAnnotations(map[string]string{helmkube.ResourcePolicyAnno: policy})
		}
		if got := keptByPolicy(obj); got != want {
			t.Errorf("keptByPolicy(%q) = %v, want %v", policy, got, want)
		}
	}
}
