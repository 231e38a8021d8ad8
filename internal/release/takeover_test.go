package release

import (
	"context"
	"errors"
	"strings"
	"testing"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	helmv1 "helm.sh/helm/v4/pkg/release/v1"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/helmrelease"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// cliInstalled is revision 1 of release web as `helm install --set config.greeting=from-cli`
// records it, and its live ConfigMap with the annotations of owner.
func cliInstalled(owner string) (*helmv1.Release, manifest.Object) {
	rel := &helmv1.Release{
		Name: "web", Namespace: testNamespace, Version: 1, Config: map[string]any{"config": map[string]any{"greeting": "from-cli"}},
		Info:     &helmv1.Info{Status: rcommon.StatusDeployed},
		Chart:    &chartv2.Chart{Metadata: &chartv2.Metadata{Name: "web", Version: "1.0.0", APIVersion: "v2"}},
		Manifest: "---\n# Source: web/templates/configmap.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  greeting: from-cli\n",
	}
	live := configMap("web", map[string]any{"greeting": "from-cli"})
	live["metadata"].(map[string]any)["annotations"] = map[string]any{"meta.helm.sh/release-name": owner, "meta.helm.sh/release-namespace": testNamespace}
	return rel, live
}

// A deployed release that the state does not record is refused without take_ownership, and
// with it planned as an upgrade of the deployed revision, whose manifests the plan shows with
// every value given to it hidden.
func TestRequest_planTakesOverOnlyWhenAllowed(t *testing.T) {
	rel, live := cliInstalled("web")
	cluster := liveCluster{history: []*helmv1.Release{rel}, live: map[string]manifest.Object{"web": live}}
	_, err := Prepare(context.Background(), cluster, webInputs(nil)).Plan(context.Background(), nil, nil)
	var exists *ExistsError
	if !errors.As(err, &exists) || exists.Last.Version != 1 {
		t.Fatalf("plan without take_ownership = %v, want ExistsError of revision 1", err)
	}
	if _, err := Prepare(context.Background(), cluster, webInputs(nil)).renderApply(context.Background(), nil); !errors.As(err, &exists) {
		t.Fatalf("apply without take_ownership = %v, want ExistsError", err)
	}
	in := webInputs(map[string]string{"config.greeting": "from-terraform"})
	// A release to create has no key for its markers yet.
	in.TakeOwnership, in.RedactionRecord = true, manifest.RedactionRecord{}
	p := planned(t, Prepare(context.Background(), cluster, in), nil)
	if !p.Next.Adopt || p.Next.Last.Version != 1 || p.Rendering.Options.Revision != 2 || !p.Rendering.Options.IsUpgrade {
		t.Fatalf("plan with take_ownership = %+v, revision %d; want to adopt revision 1 with an upgrade to 2", p.Next, p.Rendering.Options.Revision)
	}
	deployed := p.Deployed["ConfigMap/web"]
	if deployed == "" || strings.Contains(deployed, "from-cli") {
		t.Errorf("the deployed ConfigMap = %q, want it shown with the value given to the CLI hidden", deployed)
	}
	if !strings.Contains(p.Rendering.Manifests["ConfigMap/web"], "from-terraform") {
		t.Errorf("the planned ConfigMap does not hold the configuration's greeting:\n%s", p.Rendering.Manifests["ConfigMap/web"])
	}
	changes := manifest.DiffManifests(p.Deployed, p.Rendering.Manifests)
	if len(changes) == 0 {
		t.Errorf("no difference between the deployed and the planned release")
	}
}

// Taking ownership refuses, at plan and at apply, an object that another Helm release owns,
// naming that release; an object of this release or without an owner passes.
func TestRequest_takeOwnershipRefusesAnotherReleasesObject(t *testing.T) {
	_, live := cliInstalled("other")
	in := webInputs(nil)
	in.TakeOwnership = true
	cluster := liveCluster{live: map[string]manifest.Object{"web": live}}
	_, err := Prepare(context.Background(), cluster, in).Plan(context.Background(), nil, nil)
	var owned *OwnedError
	if !errors.As(err, &owned) || owned.Owner != (helmrelease.Owner{Namespace: testNamespace, Name: "other"}) || !strings.HasSuffix(owned.Object, " web") {
		t.Fatalf("plan over another release's object = %v, want an OwnedError naming %s/other", err, testNamespace)
	}
	if _, err := Prepare(context.Background(), cluster, in).renderApply(context.Background(), nil); !errors.As(err, &owned) {
		t.Fatalf("apply over another release's object = %v, want an OwnedError", err)
	}
	_, ours := cliInstalled("web")
	unowned := configMap("web", map[string]any{"greeting": "from-kubectl"})
	for name, obj := range map[string]manifest.Object{"ours": ours, "without owner": unowned} {
		if _, err := Prepare(context.Background(), liveCluster{live: map[string]manifest.Object{"web": obj}}, in).Plan(context.Background(), nil, nil); err != nil {
			t.Errorf("plan over an object %s = %v, want it planned", name, err)
		}
	}
}
