package helmrelease

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kubectl/pkg/validation"
	"sigs.k8s.io/yaml"

	helmkube "helm.sh/helm/v4/pkg/kube"
)

// serverValidatedFactory is Helm's kube client factory with kubectl's strict field validation
// answered, for the kinds the API server is known to validate itself (servesFieldValidation:
// kube.Clients.ServesFieldValidation), without the OpenAPI documents kubectl reads to learn it.
// Helm's Build validates the objects an install or upgrade applies with kubectl's validator,
// which checks nothing on the client for a kind whose PATCH takes fieldValidation (the server
// validates it, the apply asking for it) and reads the document of each object's group version
// to find out: api/v1's is 1.6 MB, downloaded through the GitLab agent's tunnel and parsed
// whole, 290 ms of CPU of an apply of 10 objects. Every other kind is kubectl's to validate.
type serverValidatedFactory struct {
	helmkube.Factory
	servesFieldValidation func(schema.GroupVersionKind) bool
}

func (f serverValidatedFactory) Validator(directive string) (validation.Schema, error) {
	next, err := f.Factory.Validator(directive)
	if err != nil || directive != metav1.FieldValidationStrict {
		return next, err
	}
	return serverValidated{next: next, serves: f.servesFieldValidation}, nil
}

// serverValidated passes what kubectl's validator next would pass without a check on the
// client, an object of a kind serves says the server validates; it leaves everything else,
// and anything it cannot read the kind of, to next.
type serverValidated struct {
	next   validation.Schema
	serves func(schema.GroupVersionKind) bool
}

func (s serverValidated) ValidateBytes(data []byte) error {
	var meta metav1.TypeMeta
	if err := yaml.Unmarshal(data, &meta); err == nil && meta.APIVersion != "" && meta.Kind != "" {
		if gv, err := schema.ParseGroupVersion(meta.APIVersion); err == nil && s.serves(gv.WithKind(meta.Kind)) {
			return nil
		}
	}
	return s.next.ValidateBytes(data)
}
