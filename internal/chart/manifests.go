package chart

import (
	"errors"
	"fmt"

	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// MaxReleaseNameLength is the longest release name Helm accepts: 63, the
// longest DNS label, less 10 characters charts commonly append.
const MaxReleaseNameLength = 53

// ValidateReleaseName checks name against Helm's rules: at most 53
// characters of lowercase letters, digits, '-' and '.', starting and ending
// with a letter or digit.
func ValidateReleaseName(name string) error {
	if name == "" {
		return errors.New("release name is empty")
	}
	if len(name) > MaxReleaseNameLength {
		return fmt.Errorf("release name %q is %d characters long; Helm allows at most %d", name, len(name), MaxReleaseNameLength)
	}
	if err := chartutil.ValidateReleaseName(name); err != nil {
		return fmt.Errorf("release name %q is invalid: use lowercase letters, digits, '-' and '.', starting and ending with a letter or digit", name)
	}
	return nil
}

// RedactedManifests returns the manifest of every object of r (CRDs, ordinary objects and
// hooks) keyed as package manifest documents ("<Kind>[.<group>]/[<namespace>/]<name>", the
// namespace only when it is not namespace), normalized and redacted by redactor: Secret data
// and stringData become markers, and every value redactor knows to be sensitive is hidden
// wherever it lands, those of the Secrets among r's test hooks too. Hooks keep their
// helm.sh/hook annotations, so a reader tells them apart.
//
// isNamespaced says whether a kind is namespaced (from the cluster's discovery); nil means
// manifest.BuiltinIsNamespaced.
func RedactedManifests(r *Rendered, namespace string, redactor *manifest.Redactor, isNamespaced func(apiVersion, kind string) bool) (map[string]string, error) {
	manifests, err := redactor.WithSecretsOf(r.TestHooks).Manifests(r.allObjects(), namespace, isNamespaced)
	if err != nil {
		return nil, fmt.Errorf("manifests: %w", err)
	}
	return manifests, nil
}
