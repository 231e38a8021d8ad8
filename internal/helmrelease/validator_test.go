package helmrelease

import (
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kubectl/pkg/validation"

	helmkube "helm.sh/helm/v4/pkg/kube"
)

// kubectlSchema stands for kubectl's validator: it records what it is asked and refuses it.
type kubectlSchema struct{ asked *int }

func (k kubectlSchema) ValidateBytes([]byte) error {
	*k.asked++
	return errors.New("kubectl's answer")
}

// An object of a kind the server is known to validate passes without kubectl's check; any
// other kind, and an object whose kind cannot be read, is kubectl's to answer.
func TestServerValidated_leavesToKubectlWhatTheServerIsNotKnownToValidate(t *testing.T) {
	serves := func(gvk schema.GroupVersionKind) bool {
		return gvk == schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	}
	for _, tc := range []struct {
		name, data string
		kubectl    bool
	}{
		{"a kind the server validates, YAML", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n", false},
		{"a kind the server validates, JSON", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"}}`, false},
		{"another kind", "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n", true},
		{"no kind", "apiVersion: apps/v1\nmetadata:\n  name: web\n", true},
		{"a kind that is not a string", "apiVersion: apps/v1\nkind: [Deployment]\n", true},
		{"a bad group version", "apiVersion: apps/v1/x\nkind: Deployment\n", true},
		{"not YAML", "kind: [", true},
	} {
		asked := 0
		err := serverValidated{next: kubectlSchema{&asked}, serves: serves}.ValidateBytes([]byte(tc.data))
		if asked := asked == 1; asked != tc.kubectl {
			t.Errorf("%s: kubectl asked: %v, want %v", tc.name, asked, tc.kubectl)
		}
		if tc.kubectl && (err == nil || err.Error() != "kubectl's answer") {
			t.Errorf("%s: %v, want kubectl's answer", tc.name, err)
		}
		if !tc.kubectl && err != nil {
			t.Errorf("%s: %v, want none", tc.name, err)
		}
	}
}

// validatorFactory is Helm's factory with kubectl's validator: kubectlSchema for every
// directive, or err.
type validatorFactory struct {
	helmkube.Factory
	asked *int
	err   error
}

func (f validatorFactory) Validator(string) (validation.Schema, error) {
	if f.err != nil {
		return nil, f.err
	}
	return kubectlSchema{f.asked}, nil
}

// Only strict validation is answered without kubectl: with any other directive kubectl's
// validator is handed back as it is (Helm asks for none other today), and a factory's error
// is Helm's to see.
func TestServerValidatedFactory_answersStrictValidationAlone(t *testing.T) {
	deployment := []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n")
	serves := func(schema.GroupVersionKind) bool { return true }
	for _, tc := range []struct {
		directive string
		kubectl   bool
	}{
		{metav1.FieldValidationStrict, false},
		{metav1.FieldValidationWarn, true},
		{metav1.FieldValidationIgnore, true},
	} {
		asked := 0
		v, err := serverValidatedFactory{Factory: validatorFactory{asked: &asked}, servesFieldValidation: serves}.Validator(tc.directive)
		if err != nil {
			t.Fatalf("%s: %v", tc.directive, err)
		}
		err = v.ValidateBytes(deployment)
		if got := asked == 1; got != tc.kubectl {
			t.Errorf("%s: kubectl asked: %v, want %v", tc.directive, got, tc.kubectl)
		}
		if tc.kubectl != (err != nil) {
			t.Errorf("%s: %v", tc.directive, err)
		}
	}
	failed := errors.New("no schema")
	if _, err := (serverValidatedFactory{Factory: validatorFactory{err: failed}, servesFieldValidation: serves}).Validator(metav1.FieldValidationStrict); !errors.Is(err, failed) {
		t.Fatalf("factory's error: %v, want %v", err, failed)
	}
}
