package manifest

import (
	"fmt"
	"strings"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/parallel"
)

// Manifests normalizes, redacts and renders each object and returns the
// manifests by [Key]. Keys are relative to defaultNamespace, which is also
// the namespace of namespaced objects that do not name one.
//
// isNamespaced says whether a kind is namespaced, usually from the cluster's
// discovery; nil means [BuiltinIsNamespaced].
//
// The values of the Secrets among objs (at least 6 bytes long, usernames
// aside: namesAUser) are treated as sensitive everywhere, so a password that
// a chart also writes into a ConfigMap is hidden there too. Use [Redactor.Manifests] to hide further
// values. It is an error for two objects to have the same key.
func Manifests(objs []Object, defaultNamespace string, isNamespaced func(apiVersion, kind string) bool) (map[string]string, error) {
	var r *Redactor
	return r.Manifests(objs, defaultNamespace, isNamespaced)
}

// Manifests is [Manifests] hiding r's sensitive values as well.
func (r *Redactor) Manifests(objs []Object, defaultNamespace string, isNamespaced func(apiVersion, kind string) bool) (map[string]string, error) {
	r = r.withValues(harvestSecretValues(objs))
	var keys []string
	var normalized []Object
	err := r.eachKeyed(objs, defaultNamespace, isNamespaced, func(key string, obj Object) error {
		keys, normalized = append(keys, key), append(normalized, obj)
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Each object is redacted and written on every core: it owns its normalized copy, and
	// the redactor is only read. An object of the same content as one written before in this
	// process takes that text (remember.go). The errors are then read in the objects' order.
	texts := make([]string, len(keys))
	errs := make([]error, len(keys))
	parallel.Chunks(len(keys), func(start, end int) {
		for i := start; i < end; i++ {
			r.redactInPlace(normalized[i])
			texts[i], errs[i] = written.render(normalized[i])
		}
	})
	manifests := make(map[string]string, len(keys))
	for i, key := range keys {
		if errs[i] != nil {
			return nil, fmt.Errorf("%s: %w", key, errs[i])
		}
		manifests[key] = texts[i]
	}
	return manifests, nil
}

// Keys returns the keys [Manifests] gives objs, without redacting and rendering them.
func Keys(objs []Object, defaultNamespace string, isNamespaced func(apiVersion, kind string) bool) (map[string]bool, error) {
	var r *Redactor
	return r.Keys(objs, defaultNamespace, isNamespaced)
}

// Keys returns the keys [Redactor.Manifests] gives objs, without redacting and rendering them.
func (r *Redactor) Keys(objs []Object, defaultNamespace string, isNamespaced func(apiVersion, kind string) bool) (map[string]bool, error) {
	r = r.withValues(harvestSecretValues(objs))
	keys := make(map[string]bool, len(objs))
	err := r.eachKeyed(objs, defaultNamespace, isNamespaced, func(key string, _ Object) error {
		keys[key] = true
		return nil
	})
	if err != nil {
		return nil, err
	}
	return keys, nil
}

// eachKeyed normalizes each object and calls fn with its key (redacted by r, as a name could
// quote a sensitive value) and the normalized copy. Two objects with one key are an error.
func (r *Redactor) eachKeyed(objs []Object, defaultNamespace string, isNamespaced func(apiVersion, kind string) bool, fn func(key string, normalized Object) error) error {
	if isNamespaced == nil {
		isNamespaced = BuiltinIsNamespaced
	}
	indexByKey := make(map[string]int, len(objs))
	for i, obj := range objs {
		if err := checkIdentity(obj); err != nil {
			return fmt.Errorf("object %d: %w", i+1, err)
		}
		apiVersion, _ := obj["apiVersion"].(string)
		kind, _ := obj["kind"].(string)
		normalized := Normalize(obj, defaultNamespace, isNamespaced(apiVersion, kind))
		key := r.Key(normalized, defaultNamespace)
		if first, duplicate := indexByKey[key]; duplicate {
			return fmt.Errorf("duplicate object %s: objects %d and %d have the same kind, group, namespace and name", key, first+1, i+1)
		}
		indexByKey[key] = i
		if err := fn(key, normalized); err != nil {
			return err
		}
	}
	return nil
}

// clusterScopedKinds are the cluster-scoped kinds built into Kubernetes, as
// "<group>/<Kind>" with an empty group for the core group.
var clusterScopedKinds = map[string]bool{
	"/Namespace":                            true,
	"/Node":                                 true,
	"/PersistentVolume":                     true,
	"/ComponentStatus":                      true,
	"rbac.authorization.k8s.io/ClusterRole": true,
	"rbac.authorization.k8s.io/ClusterRoleBinding":                  true,
	"apiextensions.k8s.io/CustomResourceDefinition":                 true,
	"apiregistration.k8s.io/APIService":                             true,
	"admissionregistration.k8s.io/MutatingWebhookConfiguration":     true,
	"admissionregistration.k8s.io/ValidatingWebhookConfiguration":   true,
	"admissionregistration.k8s.io/ValidatingAdmissionPolicy":        true,
	"admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding": true,
	"admissionregistration.k8s.io/MutatingAdmissionPolicy":          true,
	"admissionregistration.k8s.io/MutatingAdmissionPolicyBinding":   true,
	"storage.k8s.io/StorageClass":                                   true,
	"storage.k8s.io/CSIDriver":                                      true,
	"storage.k8s.io/CSINode":                                        true,
	"storage.k8s.io/VolumeAttachment":                               true,
	"storage.k8s.io/VolumeAttributesClass":                          true,
	"scheduling.k8s.io/PriorityClass":                               true,
	"node.k8s.io/RuntimeClass":                                      true,
	"networking.k8s.io/IngressClass":                                true,
	"networking.k8s.io/IPAddress":                                   true,
	"networking.k8s.io/ServiceCIDR":                                 true,
	"certificates.k8s.io/CertificateSigningRequest":                 true,
	"certificates.k8s.io/ClusterTrustBundle":                        true,
	"flowcontrol.apiserver.k8s.io/FlowSchema":                       true,
	"flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration":       true,
	"resource.k8s.io/DeviceClass":                                   true,
	"resource.k8s.io/ResourceSlice":                                 true,
}

// BuiltinIsNamespaced reports whether a kind is namespaced when the cluster
// cannot be asked: the cluster-scoped kinds built into Kubernetes are not,
// everything else (custom resources included) is assumed to be. Prefer the
// cluster's discovery where there is one.
func BuiltinIsNamespaced(apiVersion, kind string) bool {
	group, _, hasGroup := strings.Cut(apiVersion, "/")
	if !hasGroup {
		group = ""
	}
	return !clusterScopedKinds[group+"/"+kind]
}

// ObjectDigests returns, by the keys [Redactor.Manifests] gives objs, a keyed digest of each
// normalized object before redaction (see [Digest]): what tells, without keeping any value,
// whether an object is the same as one applied earlier.
func (r *Redactor) ObjectDigests(objs []Object, defaultNamespace string, isNamespaced func(apiVersion, kind string) bool, key []byte) (map[string]string, error) {
	return r.ObjectDigestsOf(objs, defaultNamespace, isNamespaced, key, nil)
}

// ObjectDigestsOf is ObjectDigests of the objects whose keys wanted accepts (all of them when
// wanted is nil): a plan needs the digests of the objects it shows changed alone, and digesting
// is most of what a thousand objects' digests cost.
func (r *Redactor) ObjectDigestsOf(objs []Object, defaultNamespace string, isNamespaced func(apiVersion, kind string) bool, key []byte, wanted func(key string) bool) (map[string]string, error) {
	r = r.withValues(harvestSecretValues(objs))
	digests := make(map[string]string, len(objs))
	err := r.eachKeyed(objs, defaultNamespace, isNamespaced, func(k string, normalized Object) error {
		if wanted != nil && !wanted(k) {
			return nil
		}
		digest, err := Digest(key, []Object{normalized})
		digests[k] = digest
		return err
	})
	if err != nil {
		return nil, err
	}
	return digests, nil
}
