package provider

import (
	"fmt"
	"os"
	"regexp"
	"testing"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chart"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/validate"
)

// The release's documentation names the Kubernetes version of the schema the provider ships;
// it must stay the version the libraries are when they are upgraded.
func TestReleaseDocs_nameTheShippedSchemaVersion(t *testing.T) {
	for _, file := range []string{"../../templates/resources/release.md.tmpl", "../../docs/resources/release.md"} {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		found := regexp.MustCompile(`\((\d+\.\d+) for this release\)`).FindSubmatch(text)
		if found == nil {
			t.Fatalf("%s no longer says which Kubernetes version its shipped schema is (\"(1.N for this release)\")", file)
		}
		shipped := validate.LibraryVersion()
		if want := fmt.Sprintf("%d.%d", shipped.Major, shipped.Minor); string(found[1]) != want {
			t.Errorf("%s says the shipped schema is Kubernetes %s; the libraries are %s", file, found[1], want)
		}
	}
}

// The provider's documentation says which .Capabilities.KubeVersion a plan renders with when
// neither kube_version nor a cluster gives one, and it must stay the version the rendering uses.
func TestProviderDocs_nameTheDefaultKubeVersion(t *testing.T) {
	for _, file := range []string{"../../templates/index.md.tmpl", "../../docs/index.md"} {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		found := regexp.MustCompile("neither `kube_version` nor a reachable cluster renders with `.Capabilities.KubeVersion` (v[0-9.]+),").FindSubmatch(text)
		if found == nil {
			t.Fatalf("%s no longer says which Kubernetes version a plan without kube_version and without a cluster renders with", file)
		}
		if string(found[1]) != chart.DefaultKubeVersion {
			t.Errorf("%s says a plan without kube_version and cluster renders with %s; it renders with %s", file, found[1], chart.DefaultKubeVersion)
		}
	}
}
