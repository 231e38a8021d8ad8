package validate

import (
	"errors"
	"fmt"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// ParseDefinition reads one CustomResourceDefinition given as YAML (a manifest another release
// exports in its crds) and returns it as an Object keyed as manifests key it. It must be one
// apiextensions.k8s.io/v1 CustomResourceDefinition naming its group, kind and versions.
func ParseDefinition(text string) (Object, error) {
	objs, err := manifest.SplitDocuments(text)
	if err != nil {
		return Object{}, err
	}
	if len(objs) != 1 {
		return Object{}, fmt.Errorf("expected one CustomResourceDefinition, got %d objects", len(objs))
	}
	crd, err := definitionOf(objs[0])
	if err != nil {
		return Object{}, err
	}
	switch {
	case crd.Spec.Group == "" || crd.Spec.Names.Kind == "":
		return Object{}, errors.New("the CustomResourceDefinition names no spec.group or spec.names.kind")
	case len(crd.Spec.Versions) == 0:
		return Object{}, errors.New("the CustomResourceDefinition has no spec.versions")
	}
	return Object{Key: manifest.Key(objs[0], ""), Object: objs[0]}, nil
}

// definitionOf converts obj to an apiextensions.k8s.io/v1 CustomResourceDefinition.
func definitionOf(obj map[string]any) (*apiextensionsv1.CustomResourceDefinition, error) {
	if obj["apiVersion"] != "apiextensions.k8s.io/v1" || obj["kind"] != "CustomResourceDefinition" {
		return nil, fmt.Errorf("expected an apiextensions.k8s.io/v1 CustomResourceDefinition, got %v %v", obj["apiVersion"], obj["kind"])
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &crd); err != nil {
		return nil, fmt.Errorf("read the CustomResourceDefinition: %w", err)
	}
	return &crd, nil
}

// DefinedKinds returns the group and kind of every CustomResourceDefinition among objs that
// defines at least one version, as crdSchemas keys them, without compiling their schemas.
func DefinedKinds(objs []Object) map[schema.GroupKind]bool {
	kinds := map[schema.GroupKind]bool{}
	for _, o := range objs {
		crd, err := definitionOf(o.Object)
		if err != nil || len(crd.Spec.Versions) == 0 {
			continue
		}
		kinds[schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}] = true
	}
	return kinds
}

// ServedAPIVersions returns what .Capabilities.APIVersions lists for the versions the
// CustomResourceDefinitions among objs serve: "<group>/<version>" and
// "<group>/<version>/<Kind>", as Helm lists a served kind.
func ServedAPIVersions(objs []Object) []string {
	var out []string
	for _, o := range objs {
		crd, err := definitionOf(o.Object)
		if err != nil {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Served {
				gv := crd.Spec.Group + "/" + v.Name
				out = append(out, gv, gv+"/"+crd.Spec.Names.Kind)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// DroppedStoredVersions returns the versions in storedVersions (the live definition's
// status.storedVersions: versions objects may still be stored in) that crd, the definition
// about to replace it, no longer lists. The API server refuses such a replacement; objects
// must be migrated and the version removed from status.storedVersions first.
func DroppedStoredVersions(crd map[string]any, storedVersions []string) ([]string, error) {
	def, err := definitionOf(crd)
	if err != nil {
		return nil, err
	}
	var dropped []string
	for _, stored := range storedVersions {
		if !slices.ContainsFunc(def.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Name == stored }) {
			dropped = append(dropped, stored)
		}
	}
	return dropped, nil
}
