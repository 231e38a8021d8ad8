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
	_, err := Prepare(context.Background(), cluster, webInputs(nil), nil).Plan(context.Background(), nil, nil)
	var exists *ExistsError
	if !errors.As(err, &exists) || exists.Last.Version != 1 {
		t.Fatalf("plan without take_ownership = %v, want ExistsError of revision 1", err)
	}
	if _, err := Prepare(context.Background(), cluster, webInputs(nil), nil).renderApply(context.Background(), nil); !errors.As(err, &exists) {
		t.Fatalf("apply without take_ownership = %v, want ExistsError", err)
	}
	in := webInputs(map[string]string{"config.greeting": "from-terraform"})
	// A release to create has no key for its markers yet.
	in.TakeOwnership, in.RedactionRecord = true, manifest.RedactionRecord{}
	p := planned(t, Prepare(context.Background(), cluster, in, nil), nil)
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

// otherRelease is revision 1 of release other, of status.
func otherRelease(status rcommon.Status) *helmv1.Release {
	return &helmv1.Release{Name: "other", Namespace: testNamespace, Version: 1, Info: &helmv1.Info{Status: status}}
}

// Taking ownership refuses, at plan and at apply, an object that another Helm release owns,
// naming that release; an object of this release or without an owner passes, and so does one
// whose release no longer exists (no revision stored, or its last uninstalled), which its
// uninstall kept. An owner whose history cannot be read is taken to exist.
func TestRequest_takeOwnershipRefusesAnotherReleasesObject(t *testing.T) {
	_, live := cliInstalled("other")
	in := webInputs(nil)
	in.TakeOwnership = true
	cluster := liveCluster{history: []*helmv1.Release{otherRelease(rcommon.StatusDeployed)}, live: map[string]manifest.Object{"web": live}}
	_, err := Prepare(context.Background(), cluster, in, nil).Plan(context.Background(), nil, nil)
	var owned *OwnedError
	if !errors.As(err, &owned) || owned.Owner != (helmrelease.Owner{Namespace: testNamespace, Name: "other"}) || !strings.HasSuffix(owned.Object, " web") {
		t.Fatalf("plan over another release's object = %v, want an OwnedError naming %s/other", err, testNamespace)
	}
	if _, err := Prepare(context.Background(), cluster, in, nil).renderApply(context.Background(), nil); !errors.As(err, &owned) {
		t.Fatalf("apply over another release's object = %v, want an OwnedError", err)
	}
	unread := liveCluster{historyErr: errors.New("secrets is forbidden"), live: cluster.live}
	if _, err := Prepare(context.Background(), unread, in, nil).Plan(context.Background(), nil, nil); !errors.As(err, &owned) || owned.Owner.Name != "other" {
		t.Errorf("plan over the object of a release whose history cannot be read = %v, want an OwnedError naming other", err)
	}
	_, ours := cliInstalled("web")
	unowned := configMap("web", map[string]any{"greeting": "from-kubectl"})
	for name, c := range map[string]liveCluster{
		"ours":                          {live: map[string]manifest.Object{"web": ours}},
		"without owner":                 {live: map[string]manifest.Object{"web": unowned}},
		"of a release with no revision": {live: cluster.live},
		"of an uninstalled release":     {history: []*helmv1.Release{otherRelease(rcommon.StatusUninstalled)}, live: cluster.live},
	} {
		if _, err := Prepare(context.Background(), c, in, nil).Plan(context.Background(), nil, nil); err != nil {
			t.Errorf("plan over an object %s = %v, want it planned", name, err)
		}
		if _, err := Prepare(context.Background(), c, in, nil).renderApply(context.Background(), nil); errors.As(err, &owned) {
			t.Errorf("apply over an object %s = %v, want no OwnedError", name, err)
		}
	}
}

// webRevision is revision 1 of release web as Helm records an apply of in, deployed: the
// manifest an upgrade compares its rendering with.
func webRevision(t *testing.T, in Inputs) (*helmv1.Release, *Recorded) {
	t.Helper()
	rendering, err := Prepare(context.Background(), nil, in, nil).Render(context.Background(), helmrelease.Target{Revision: 1})
	if err != nil {
		t.Fatal(err)
	}
	rel := &helmv1.Release{
		Name: "web", Namespace: testNamespace, Version: 1, Info: &helmv1.Info{Status: rcommon.StatusDeployed},
		Chart:    &chartv2.Chart{Metadata: &chartv2.Metadata{Name: "web", Version: "1.0.0", APIVersion: "v2"}},
		Manifest: rendering.Rendered.Manifest,
	}
	return rel, deployedAs(rendering.Manifests, 1)
}

// withMetadata returns obj with labels and annotations set (nil leaves them out).
func withMetadata(obj manifest.Object, labels, annotations map[string]any) manifest.Object {
	metadata := obj["metadata"].(map[string]any)
	if labels != nil {
		metadata["labels"] = labels
	}
	if annotations != nil {
		metadata["annotations"] = annotations
	}
	return obj
}

// helmOwned are the label and annotations Helm gives the objects of release owner.
func helmOwned(obj manifest.Object, owner string) manifest.Object {
	return withMetadata(obj, map[string]any{"app.kubernetes.io/managed-by": "Helm"},
		map[string]any{"meta.helm.sh/release-name": owner, "meta.helm.sh/release-namespace": testNamespace})
}

// Without take_ownership, a plan to install refuses an object of the chart that exists without
// the release's ownership metadata, as Helm's install would, naming it and what owns it; every
// object of the chart is read, once. An object of this release passes.
func TestRequest_planRefusesExistingObjectsHelmWouldRefuse(t *testing.T) {
	unowned := configMap("web", map[string]any{"greeting": "from-kubectl"})
	annotatedOnly := withMetadata(configMap("web", nil), nil, map[string]any{"meta.helm.sh/release-name": "web", "meta.helm.sh/release-namespace": testNamespace})
	tests := []struct {
		name      string
		live      manifest.Object
		unowned   *UnownedError
		ownedBy   string
		history   []*helmv1.Release
		wantReads int
	}{
		{name: "without owner", live: unowned, unowned: &UnownedError{Object: "ConfigMap web"}},
		{name: "annotated for this release without Helm's label", live: annotatedOnly, unowned: &UnownedError{Object: "ConfigMap web", Annotated: true}},
		{name: "of another release", live: helmOwned(configMap("web", nil), "other"), ownedBy: "other", history: []*helmv1.Release{otherRelease(rcommon.StatusDeployed)}},
		{name: "of a release that failed", live: helmOwned(configMap("web", nil), "other"), ownedBy: "other", history: []*helmv1.Release{otherRelease(rcommon.StatusFailed)}},
		{
			name: "of a release named without its namespace", ownedBy: "other",
			live: withMetadata(configMap("web", nil), map[string]any{"app.kubernetes.io/managed-by": "Helm"}, map[string]any{"meta.helm.sh/release-name": "other"}),
		},
		{
			name: "of a release with no revision", live: helmOwned(configMap("web", nil), "other"),
			unowned: &UnownedError{Object: "ConfigMap web", LeftBy: helmrelease.Owner{Namespace: testNamespace, Name: "other"}},
		},
		{
			name: "of an uninstalled release", live: helmOwned(configMap("web", nil), "other"), history: []*helmv1.Release{otherRelease(rcommon.StatusUninstalled)},
			unowned: &UnownedError{Object: "ConfigMap web", LeftBy: helmrelease.Owner{Namespace: testNamespace, Name: "other"}},
		},
		{name: "of this release", live: helmOwned(configMap("web", nil), "web")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var reads [][]string
			cluster := liveCluster{history: tt.history, live: map[string]manifest.Object{"web": tt.live}, reads: &reads}
			_, err := Prepare(context.Background(), cluster, webInputs(nil), nil).Plan(context.Background(), nil, nil)
			var unowned *UnownedError
			var owned *OwnedError
			switch {
			case tt.unowned != nil:
				if !errors.As(err, &unowned) || *unowned != *tt.unowned {
					t.Errorf("plan = %v, want %#v", err, tt.unowned)
				}
			case tt.ownedBy != "":
				if !errors.As(err, &owned) || owned.Object != "ConfigMap web" || owned.Owner.Name != tt.ownedBy {
					t.Errorf("plan = %v, want an OwnedError of ConfigMap web naming release %s", err, tt.ownedBy)
				}
			case err != nil:
				t.Errorf("plan = %v, want it planned", err)
			}
			if len(reads) != 1 || len(reads[0]) != 4 {
				t.Errorf("the plan read %v, want every object of the chart read at once", reads)
			}
		})
	}
}

// Without take_ownership, a plan to upgrade reads only the objects that are not in the
// revision it upgrades from, as Helm's upgrade checks only those: one new in the chart that
// exists without an owner is refused; an upgrade that adds no object reads nothing, whatever
// the live objects' metadata.
func TestRequest_planUpgradeChecksOnlyNewObjects(t *testing.T) {
	rel, recorded := webRevision(t, webInputs(nil))
	ingress := manifest.Object{"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": map[string]any{"name": "web", "namespace": testNamespace}}
	var reads [][]string
	cluster := liveCluster{history: []*helmv1.Release{rel}, live: map[string]manifest.Object{"web": ingress}, reads: &reads}
	withIngress := webInputs(map[string]string{"ingress.enabled": "true"})
	_, err := Prepare(context.Background(), cluster, withIngress, nil).Plan(context.Background(), recorded, nil)
	var unowned *UnownedError
	if !errors.As(err, &unowned) || unowned.Object != "Ingress web" {
		t.Fatalf("plan adding an Ingress that exists without owner = %v, want an UnownedError of Ingress web", err)
	}
	if len(reads) != 1 || len(reads[0]) != 1 || reads[0][0] != "Ingress web" {
		t.Errorf("the plan read %v, want only the new Ingress read", reads)
	}

	reads = nil
	cluster.live = map[string]manifest.Object{"web": configMap("web", map[string]any{"greeting": "from-kubectl"})}
	p, err := Prepare(context.Background(), cluster, webInputs(map[string]string{"config.greeting": "hi"}), nil).Plan(context.Background(), recorded, nil)
	if err != nil || p.Unchanged || p.Next.Operation != helmrelease.OperationUpgrade {
		t.Fatalf("plan changing a value = %+v, %v; want an upgrade", p, err)
	}
	if len(reads) != 0 {
		t.Errorf("an upgrade that adds no object read %v, want nothing read", reads)
	}
}

// Without take_ownership, a plan whose objects cannot be read (an identity that may not get
// them) or without a history to tell which objects the apply creates is made without the
// check, as one without a cluster: the apply's Helm checks alone. With take_ownership, a failed
// read refuses the plan.
func TestRequest_planOwnersUnread(t *testing.T) {
	refused := errors.New("configmaps is forbidden")
	var reads [][]string
	cluster := liveCluster{liveErr: refused, reads: &reads}
	if _, err := Prepare(context.Background(), cluster, webInputs(nil), nil).Plan(context.Background(), nil, nil); err != nil || len(reads) != 1 {
		t.Errorf("plan whose objects cannot be read = %v after reading %v; want it planned after one read", err, reads)
	}
	in := webInputs(nil)
	in.TakeOwnership = true
	_, err := Prepare(context.Background(), cluster, in, nil).Plan(context.Background(), nil, nil)
	var owned *OwnedError
	if !errors.As(err, &owned) || !errors.Is(err, refused) {
		t.Errorf("plan with take_ownership whose objects cannot be read = %v, want an OwnedError wrapping the refusal", err)
	}
	reads = nil
	cluster = liveCluster{historyErr: errors.New("secrets is forbidden"), live: map[string]manifest.Object{"web": configMap("web", nil)}, reads: &reads}
	if _, err := Prepare(context.Background(), cluster, webInputs(nil), nil).Plan(context.Background(), nil, nil); err != nil || len(reads) > 0 {
		t.Errorf("plan without a history = %v after reading %v; want it planned, nothing read", err, reads)
	}
}

// An upgrade whose rendered objects the state records for the revision it starts from creates
// none: the revision's manifest is not read for it, and nothing is read of the cluster; a
// record of another revision does not stand for it.
func TestRequest_planUpgradeTrustsTheRecordOfItsRevision(t *testing.T) {
	rel, recorded := webRevision(t, webInputs(nil))
	// A manifest that holds none of the objects: read, it would make every object look new.
	bare := *rel
	bare.Manifest = ""
	var reads [][]string
	cluster := liveCluster{history: []*helmv1.Release{&bare}, live: map[string]manifest.Object{"web": configMap("web", map[string]any{"greeting": "from-kubectl"})}, reads: &reads}
	changed := webInputs(map[string]string{"config.greeting": "hi"})
	if _, err := Prepare(context.Background(), cluster, changed, nil).Plan(context.Background(), recorded, nil); err != nil {
		t.Fatalf("plan = %v, want it planned from the record of revision 1", err)
	}
	if len(reads) != 0 {
		t.Errorf("the plan read %v, want nothing: the record of revision 1 holds every object", reads)
	}

	other := *recorded
	other.Revision = 7
	if _, err := Prepare(context.Background(), cluster, changed, nil).Plan(context.Background(), &other, nil); err == nil {
		t.Error("a record of revision 7 stood for revision 1: the objects its manifest lacks were not checked")
	}
}
