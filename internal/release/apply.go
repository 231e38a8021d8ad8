package release

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	rcommon "helm.sh/helm/v4/pkg/release/common"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chart"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/drift"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/helmrelease"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// Writer is what an apply changes in the cluster (helmrelease.Client).
type Writer interface {
	// WaitEstablished waits until every named CustomResourceDefinition is established.
	WaitEstablished(ctx context.Context, names []string, timeout time.Duration) error
	// ApplyDefinition applies a CustomResourceDefinition server-side.
	ApplyDefinition(ctx context.Context, crd manifest.Object) error
	// ReplaceImmutable deletes, and waits until gone, each of objs whose change only
	// immutable fields refuse; it returns their keys.
	ReplaceImmutable(ctx context.Context, keys []string, objs []manifest.Object, timeout time.Duration) ([]string, error)
	// Apply carries out next as spec says.
	Apply(ctx context.Context, spec helmrelease.Spec, next helmrelease.Next) (*helmrelease.Outcome, error)
}

// Settings are how an apply is carried out: what does not change what the release renders.
type Settings struct {
	Atomic, Wait bool
	Timeout      time.Duration
	MaxHistory   int
	// Description and Labels are the revision's (helm history, helm list --selector).
	Description string
	Labels      map[string]string
	// RecoverPending recovers a release left pending by an interrupted run first.
	RecoverPending bool
	// ForceReplace deletes, before an upgrade, each object whose change only immutable fields
	// refuse, so the upgrade creates it again.
	ForceReplace bool
}

// Shown is what the plan showed of the manifests.
type Shown struct {
	// Unknown says the plan showed no manifests at all (known after apply).
	Unknown bool
	// Manifests are the manifests the plan showed by key, and UnknownKeys the keys of those it
	// left unknown (generated values).
	Manifests   map[string]string
	UnknownKeys []string
}

// check compares what the apply rendered with what the plan showed: every object the plan
// showed must be rendered exactly so, and every object the plan left unknown must exist.
func (s Shown) check(applied map[string]string) error {
	if s.Unknown {
		return nil
	}
	comparable := make(map[string]string, len(applied))
	for k, v := range applied {
		comparable[k] = v
	}
	for _, k := range s.UnknownKeys {
		if _, ok := applied[k]; !ok {
			return &helmrelease.PlanMismatchError{Object: k, Change: "missing at apply"}
		}
		delete(comparable, k)
	}
	return helmrelease.ComparePlanned(s.Manifests, comparable)
}

// ApplyStep is the step of an apply that failed.
type ApplyStep string

const (
	StepPlanned             ApplyStep = "planned"              // the rendering is not what the plan showed: Err is a *helmrelease.PlanMismatchError
	StepPrepare             ApplyStep = "prepare"              // the frozen chart or the capabilities could not be built
	StepDefinitions         ApplyStep = "definitions"          // crds_from's definitions were not established
	StepReplaceDefinition   ApplyStep = "replace-definition"   // a definition of the chart's crds/ could not be applied
	StepDefinitionsReplaced ApplyStep = "definitions-replaced" // the chart's definitions were applied but not established
	StepReplaceObject       ApplyStep = "replace-object"       // an object to replace (force_replace) was not deleted: Err is a *helmrelease.ReplaceError
	StepHelm                ApplyStep = "helm"                 // Helm's install or upgrade failed
	StepRecord              ApplyStep = "record"               // what the next plan compares with could not be recorded
)

// ApplyError is an apply that failed at Step. Before StepHelm, nothing of the release was
// changed.
type ApplyError struct {
	Step ApplyStep
	Err  error
}

func (e *ApplyError) Error() string { return fmt.Sprintf("%s: %v", e.Step, e.Err) }
func (e *ApplyError) Unwrap() error { return e.Err }

// Applied is what an apply did.
type Applied struct {
	// Outcome is Helm's, nil when Helm did not run.
	Outcome *helmrelease.Outcome
	// Revision and Status are the release's after the apply.
	Revision int
	Status   rcommon.Status
	// Manifests are what was applied, as the plan shows them.
	Manifests map[string]string
	// Replaced are the objects deleted to be created again (force_replace).
	Replaced []string
	// Generated and Record are what the release keeps for the next plan: what it drew and
	// the redaction record.
	Generated Generated
	Record    manifest.RedactionRecord
}

// Apply installs or upgrades the release to what shown says the plan showed, over recorded
// (nil when creating), through w: it decides the next apply from the history and renders it,
// checks the rendering against the plan, waits for crds_from's definitions, replaces the
// chart's (ReplaceDefinitions) and the objects only immutable fields keep from changing
// (ForceReplace), and hands Helm the chart frozen to that rendering, so what Helm applies is
// what the plan showed, whatever the templates draw or look up. Errors from before the
// rendering are those of Plan; later ones are *ApplyError. Applied is returned once Helm ran,
// with its Outcome, even when it failed.
func (r *Request) Apply(ctx context.Context, recorded *Recorded, shown Shown, s Settings, w Writer) (*Applied, error) {
	applying, err := r.renderApply(ctx, recorded)
	if err != nil {
		return nil, err
	}
	rendered := applying.Rendering
	if err := shown.check(rendered.Manifests); err != nil {
		return nil, &ApplyError{Step: StepPlanned, Err: err}
	}
	spec, err := r.spec(applying, s)
	if err != nil {
		return nil, &ApplyError{Step: StepPrepare, Err: err}
	}
	replaced, err := r.prepareCluster(ctx, rendered, recorded == nil, s, w)
	if err != nil {
		return nil, err
	}
	out, err := w.Apply(ctx, spec, applying.Next)
	if out == nil || (err == nil && (out.Release == nil || out.Release.Info == nil)) {
		if err == nil {
			err = errors.New("the install or upgrade reported no release")
		}
		return nil, &ApplyError{Step: StepHelm, Err: err}
	}
	done := &Applied{Outcome: out, Replaced: replaced}
	if err != nil {
		return done, &ApplyError{Step: StepHelm, Err: err}
	}
	done.Revision, done.Status, done.Manifests = out.Release.Version, out.Release.Info.Status, rendered.Manifests
	done.Generated, done.Record, err = r.applied(applying)
	if err != nil {
		return done, &ApplyError{Step: StepRecord, Err: err}
	}
	return done, nil
}

// spec is what Helm is handed to carry out a.
func (r *Request) spec(a *applying, s Settings) (helmrelease.Spec, error) {
	rendered := a.Rendering
	frozen, err := chart.Freeze(rendered.Loaded, rendered.Rendered.Files, r.Patches)
	if err != nil {
		return helmrelease.Spec{}, fmt.Errorf("freeze the chart: %w", err)
	}
	caps, err := chart.Capabilities(rendered.Options)
	if err != nil {
		return helmrelease.Spec{}, fmt.Errorf("build the capabilities: %w", err)
	}
	return helmrelease.Spec{
		Name: r.Name, Namespace: r.Namespace,
		Chart: frozen.Chart, Values: rendered.Values, Capabilities: caps,
		Atomic: s.Atomic, Wait: s.Wait, Timeout: s.Timeout, MaxHistory: s.MaxHistory,
		Description: s.Description, Labels: s.Labels,
		RecoverPending: s.RecoverPending, RunTests: r.RunTests, TakeOwnership: r.TakeOwnership,
		LeaveToOthers: leaveToOthers(r.Ignore),
		PostRenderer: &helmrelease.PlanCheck{
			Planned: a.Stream,
			// Helm streams the hooks and the other objects apart; what a stream does not hold,
			// and the CRDs, come from the same rendering as the check against the plan.
			Manifests: func(objs []manifest.Object) (map[string]string, error) {
				return rendered.Redacted.PostRenderedManifests(objs, rendered.RedactionOptions)
			},
		},
	}, nil
}

// leaveToOthers is what an upgrade applies of the objects that exist: the drift rules, with
// the user's ignore rules, leave out fields others own that the user did not change.
func leaveToOthers(ignore []drift.Ignore) func(desired, previous, live []map[string]any) []map[string]any {
	return func(desired, previous, live []map[string]any) []map[string]any {
		rules := drift.NewRules(ignore, desired)
		out := make([]map[string]any, len(desired))
		for i, obj := range desired {
			out[i] = rules.Yield(obj, previous[i], live[i])
		}
		return out
	}
}

// prepareCluster is what changes in the cluster before Helm runs: crds_from's definitions
// established, the chart's crds/ definitions replaced (ReplaceDefinitions), the objects only
// immutable fields keep from changing deleted (not when creating), whose keys it returns.
func (r *Request) prepareCluster(ctx context.Context, rendered *Rendering, creating bool, s Settings, w Writer) ([]string, error) {
	if len(r.Definitions) > 0 {
		names := make([]string, 0, len(r.Definitions))
		for _, def := range r.Definitions {
			names = append(names, DefinitionName(def.Key))
		}
		if err := w.WaitEstablished(ctx, names, s.Timeout); err != nil {
			return nil, &ApplyError{Step: StepDefinitions, Err: err}
		}
	}
	if crds := rendered.Rendered.CRDs; r.ReplaceDefinitions && len(crds) > 0 {
		names := make([]string, 0, len(crds))
		for _, crd := range crds {
			if err := w.ApplyDefinition(ctx, drift.WithoutInjectedCABundles(crd)); err != nil {
				return nil, &ApplyError{Step: StepReplaceDefinition, Err: err}
			}
			names = append(names, DefinitionName(manifest.Key(crd, "")))
		}
		if err := w.WaitEstablished(ctx, names, s.Timeout); err != nil {
			return nil, &ApplyError{Step: StepDefinitionsReplaced, Err: err}
		}
	}
	if creating || !s.ForceReplace {
		return nil, nil
	}
	changed := r.changed(rendered, nil)
	keys, objs := make([]string, len(changed)), make([]manifest.Object, len(changed))
	for i, o := range changed {
		keys[i], objs[i] = o.key, o.object
	}
	replaced, err := w.ReplaceImmutable(ctx, keys, objs, s.Timeout)
	if err != nil {
		return nil, &ApplyError{Step: StepReplaceObject, Err: err}
	}
	return replaced, nil
}

// definitionKeyPrefix starts the manifest key of a CustomResourceDefinition.
const definitionKeyPrefix = "CustomResourceDefinition.apiextensions.k8s.io/"

// IsDefinitionKey reports whether key is the manifest key of a CustomResourceDefinition.
func IsDefinitionKey(key string) bool { return strings.HasPrefix(key, definitionKeyPrefix) }

// DefinitionName is the name of the CustomResourceDefinition whose manifest key is key.
func DefinitionName(key string) string { return strings.TrimPrefix(key, definitionKeyPrefix) }
