package release

import (
	"context"
	"fmt"
	"maps"

	rcommon "helm.sh/helm/v4/pkg/release/common"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/helmrelease"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// Recorded is what the state recorded of the release's last plan or apply.
type Recorded struct {
	// Manifests are the known manifests; Complete says that none is unknown or null.
	Manifests    map[string]string
	Complete     bool
	Revision     int
	Status       rcommon.Status
	ChartVersion string
}

// manifests returns the recorded manifests, none without a record.
func (rec *Recorded) manifests() map[string]string {
	if rec == nil {
		return nil
	}
	return rec.Manifests
}

// revision returns the recorded revision, 0 without a record.
func (rec *Recorded) revision() int {
	if rec == nil {
		return 0
	}
	return rec.Revision
}

// Shows reports whether the record shows exactly manifests.
func (rec *Recorded) Shows(manifests map[string]string) bool {
	return rec != nil && rec.Complete && maps.Equal(rec.Manifests, manifests)
}

// Upgraded reports whether applying what shown shows, of chart version chartVersion, over the
// record takes a Helm install or upgrade: there is no record, the objects or the chart version
// change, or the release is not deployed. Settings alone (timeout, atomic, a reformatted values
// document) are only recorded.
func (rec *Recorded) Upgraded(shown Shown, chartVersion string) bool {
	return rec == nil || shown.Unknown || len(shown.UnknownKeys) > 0 ||
		!maps.Equal(rec.Manifests, shown.Manifests) || rec.ChartVersion != chartVersion ||
		rec.Status != rcommon.StatusDeployed
}

// Plan is what a plan shows of the release.
type Plan struct {
	// Unchanged says that the release renders as recorded: the plan keeps the record.
	Unchanged bool
	Rendering *Rendering
	// Next is the apply the plan rendered for.
	Next helmrelease.Next
	// Deployed, when Next.Adopt, are the manifests of the revision taken over, as an import
	// reads them, for the plan to show what the apply changes of it.
	Deployed map[string]string
	// DefinitionsNotApplied are the keys of the definitions of the chart's crds/ that the plan
	// shows changed or added on an upgrade the apply makes without ReplaceDefinitions: Helm
	// creates them on install alone, so the apply leaves them as the cluster has them.
	DefinitionsNotApplied []string
}

// Plan renders the release as its next apply will render it, over recorded (nil for a
// release without a state). onlyIgnoredDiffer, when not nil, reports whether a rendering of
// the recorded revision differs from the live objects only in what the user's rules ignore.
func (r *Request) Plan(ctx context.Context, recorded *Recorded, onlyIgnoredDiffer func(rendered map[string]string) bool) (*Plan, error) {
	if recorded != nil && recorded.Status == rcommon.StatusDeployed && recorded.Revision > 0 {
		// Compare with what the recorded revision renders: objects that use .Release.Revision
		// or .Release.IsUpgrade (hooks, often) differ in every revision, and must not make the
		// plan of an unchanged release non-empty.
		same, err := r.Render(ctx, helmrelease.Target{Revision: recorded.Revision, IsUpgrade: recorded.Revision > 1})
		if err != nil {
			return nil, err
		}
		r.keepUnchanged(same, recorded.Manifests)
		unchanged := recorded.Shows(same.Manifests) || (onlyIgnoredDiffer != nil && onlyIgnoredDiffer(same.Manifests))
		if unchanged && same.Loaded.Version == recorded.ChartVersion {
			return &Plan{Unchanged: true, Rendering: same}, nil
		}
	}
	// A release may also exist without a state, from an earlier run whose create failed; the
	// apply continues it. A deployed one is taken over, or refused.
	next := r.next(recorded)
	if next.Refused {
		return nil, &ExistsError{Last: next.Last}
	}
	rendering, err := r.Render(ctx, next.Target)
	if err != nil {
		return nil, err
	}
	if err := r.checkPlanOwners(ctx, rendering, recorded, next); err != nil {
		return nil, err
	}
	r.keepUnchanged(rendering, recorded.manifests())
	plan := &Plan{Rendering: rendering, Next: next}
	if !r.ReplaceDefinitions && next.Operation == helmrelease.OperationUpgrade {
		plan.DefinitionsNotApplied = r.definitionsChanged(rendering, recorded.manifests())
	}
	if next.Adopt {
		if plan.Deployed, err = r.deployedManifests(ctx); err != nil {
			return nil, err
		}
	}
	return plan, nil
}

// claim is what the configuration holds of the release, recorded being the state's record.
func (r *Request) claim(recorded *Recorded) helmrelease.Claim {
	return helmrelease.Claim{Recorded: recorded != nil, TakeOwnership: r.TakeOwnership}
}

// next decides the next apply of the release from its history, or from the recorded revision
// and status when the plan is made without the cluster or the history cannot be read: the
// apply decides from the history and refuses a rendering the plan did not show.
func (r *Request) next(recorded *Recorded) helmrelease.Next {
	if next, err := r.History.Next(r.claim(recorded)); err == nil {
		return next
	}
	if recorded == nil {
		return helmrelease.Decide(nil, r.claim(nil))
	}
	return helmrelease.DecideFromLast(helmrelease.Revision{Version: recorded.Revision, Status: recorded.Status})
}

// applying is what an apply carries out.
type applying struct {
	Next      helmrelease.Next
	Rendering *Rendering
	// Stream are the manifests Helm's stream is compared with: the rendering as it is, where
	// Rendering.Manifests are what the plan showed.
	Stream map[string]string
}

// HistoryError is a history that could not be read, so nothing was applied.
type HistoryError struct{ Err error }

func (e *HistoryError) Error() string { return "read the release's history: " + e.Err.Error() }
func (e *HistoryError) Unwrap() error { return e.Err }

// ExistsError is a release to create that Helm already has, deployed, and that the
// configuration may not take over.
type ExistsError struct{ Last helmrelease.Revision }

func (e *ExistsError) Error() string {
	return fmt.Sprintf("the release exists (revision %d, %s)", e.Last.Version, e.Last.Status)
}

// renderApply decides the release's next apply from its history and renders it, over recorded
// (nil when creating), drawing the release's seed when it has none.
func (r *Request) renderApply(ctx context.Context, recorded *Recorded) (*applying, error) {
	next, err := r.History.Next(r.claim(recorded))
	if err != nil {
		return nil, &HistoryError{Err: err}
	}
	if next.Refused {
		return nil, &ExistsError{Last: next.Last}
	}
	if r.Generated, err = r.Generated.WithSeed(); err != nil {
		return nil, err
	}
	rendering, err := r.Render(ctx, next.Target)
	if err != nil {
		return nil, err
	}
	if err := r.checkOwners(ctx, rendering); err != nil {
		return nil, err
	}
	stream := rendering.Manifests
	r.keepUnchanged(rendering, recorded.manifests())
	return &applying{Next: next, Rendering: rendering, Stream: stream}, nil
}

// applied returns what the release keeps once a is applied, for the next plan: the Generated
// record of what it drew and the redaction record, with a key drawn when it had none.
func (r *Request) applied(a *applying) (Generated, manifest.RedactionRecord, error) {
	rec, err := a.Rendering.Recorded(r.RedactionRecord)
	return a.Rendering.Drawn(r.Generated.Seed), rec, err
}

// definitionsChanged returns the keys of the definitions of the chart's crds/ whose manifests
// rendered changes from previous, or adds.
func (r *Request) definitionsChanged(rendered *Rendering, previous map[string]string) []string {
	var keys []string
	for _, crd := range rendered.Rendered.CRDs {
		key := r.Redactor.Key(crd, r.Namespace)
		if text, ok := previous[key]; !ok || text != rendered.Manifests[key] {
			keys = append(keys, key)
		}
	}
	return keys
}
