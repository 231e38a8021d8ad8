package release

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	helmv1 "helm.sh/helm/v4/pkg/release/v1"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chart"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/drift"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/helmrelease"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// ReadStep names where a refresh failed.
type ReadStep string

const (
	ReadHistory   ReadStep = "history"   // Helm's history of the release could not be read
	ReadKey       ReadStep = "key"       // no key for the release's markers could be drawn
	ReadRecorded  ReadStep = "recorded"  // the manifest Helm recorded cannot be read
	ReadLive      ReadStep = "live"      // the live objects could not be read
	ReadManifests ReadStep = "manifests" // the live objects could not be turned into manifests
)

// ReadError is a refresh that failed at Step. Revision is the revision read, after
// ReadHistory.
type ReadError struct {
	Step     ReadStep
	Revision int
	Err      error
}

func (e *ReadError) Error() string { return fmt.Sprintf("read release (%s): %v", e.Step, e.Err) }
func (e *ReadError) Unwrap() error { return e.Err }

// Refreshed is what a refresh found of the release.
type Refreshed struct {
	// Gone says the release no longer exists; nothing else is set.
	Gone bool
	// Last is the release's newest revision.
	Last *helmv1.Release
	// Manifests are the live objects' manifests, with the hooks and CRDs the recorded state
	// (or, for an import, Helm's record) holds.
	Manifests map[string]string
	// RedactionRecord is what the release keeps for its redaction from now on; RecordChanged
	// says it differs from the one the request was prepared with and must be written, and the
	// import's mark cleared.
	RedactionRecord manifest.RedactionRecord
	RecordChanged   bool
	// EveryStringHidden, when not nil, says why an imported release's manifests hide every
	// string of its objects but their names.
	EveryStringHidden *EveryStringHidden
}

// EveryStringHidden is why an imported release's manifests hide every string.
type EveryStringHidden struct {
	Reason string
	// Err is the error that made the recorded chart unrenderable, redacted, when there was one.
	Err string
}

// Read refreshes the release from the cluster over recorded (what the state holds): its last
// revision from the history the request read, and its manifests from the live objects,
// projected onto the fields the chart sets. A release without a key gets one, and an imported
// one (Inputs.importedManifests) is redacted
// conservatively, as which inputs are sensitive is not known without its configuration.
func (r *Request) Read(ctx context.Context, recorded *Recorded) (*Refreshed, error) {
	last, err := r.History.Last(r.Namespace, r.Name)
	if errors.Is(err, helmrelease.ErrNotFound) {
		return &Refreshed{Gone: true}, nil
	}
	if err != nil {
		return nil, &ReadError{Step: ReadHistory, Err: err}
	}
	out := &Refreshed{Last: last, RedactionRecord: r.RedactionRecord}
	rec := &out.RedactionRecord
	var imported *manifest.Redactor
	if rec.Key == nil || rec.Conservative {
		// An imported release's manifests stay conservative, redacted the same way at each
		// refresh, until a change writes them as the configuration redacts them.
		if rec.Key == nil {
			if rec.Key, err = manifest.NewRedactionKey(); err != nil {
				return nil, &ReadError{Step: ReadKey, Revision: last.Version, Err: err}
			}
		}
		if r.importedManifests() {
			imported, out.EveryStringHidden = r.importRedactor(ctx, last, rec)
		}
		out.RecordChanged = true
	}
	out.Manifests, err = r.liveManifests(ctx, last, recorded, liveRead{rec: *rec, imported: imported, keep: true})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// LiveManifests returns the manifests of the live objects of last, the release's newest
// revision, as Read does, without changing the request's redactor.
func (r *Request) LiveManifests(ctx context.Context, last *helmv1.Release, recorded *Recorded) (map[string]string, error) {
	return r.liveManifests(ctx, last, recorded, liveRead{rec: r.RedactionRecord})
}

// WithLiveDefinitions returns recorded with the manifests of the definitions of crds/ that the
// last revision holds as the cluster has them, left out where it has none: what a refresh under
// ReplaceDefinitions reads. It is for the plan that turns ReplaceDefinitions on, whose refresh,
// made under the state's policy, kept them as recorded, where the apply under the new policy
// applies them: the plan compares the chart's with the cluster's, as the plans after it do.
// Only the definitions are read (the refresh read the other objects moments before). replaced
// are the keys, sorted, of the definitions the cluster has otherwise than recorded, or not at
// all: those the apply replaces.
func (r *Request) WithLiveDefinitions(ctx context.Context, recorded *Recorded) (out *Recorded, replaced []string, err error) {
	if recorded == nil || !r.ReplaceDefinitions {
		return recorded, nil, nil
	}
	last, err := r.History.Last(r.Namespace, r.Name)
	if err != nil {
		return nil, nil, err
	}
	crds, err := recordedCRDs(last)
	if err != nil || len(crds) == 0 {
		return recorded, nil, err
	}
	live, err := r.liveManifests(ctx, last, recorded, liveRead{rec: r.RedactionRecord, definitionsOnly: true})
	if err != nil {
		return nil, nil, err
	}
	out = &Recorded{}
	*out = *recorded
	out.Manifests = maps.Clone(recorded.Manifests)
	for _, crd := range crds {
		key := r.Redactor.Key(crd, r.Namespace)
		text, ok := live[key]
		if recorded.Manifests[key] != text {
			replaced = append(replaced, key)
		}
		if ok {
			out.Manifests[key] = text
		} else {
			delete(out.Manifests, key)
		}
	}
	slices.Sort(replaced)
	return out, slices.Compact(replaced), nil
}

// liveRead is how liveManifests reads a release's live objects.
type liveRead struct {
	// rec is the release's redaction record.
	rec manifest.RedactionRecord
	// imported, when not nil, redacts the objects instead of what the record knows.
	imported *manifest.Redactor
	// keep makes the redactor used the request's.
	keep bool
	// definitionsOnly reads the definitions of crds/ under ReplaceDefinitions alone; the other
	// objects of the revision are left out of the manifests, as if gone.
	definitionsOnly bool
}

// liveManifests returns the manifests of the release's live objects: for each object of the
// last revision, the live values of the fields the chart sets, as the request's ignore rules
// project them; an object that no longer exists is left out, so the plan shows it being added
// again. Hooks and CRDs, which Helm does not keep up to date, keep the manifests recorded
// (Helm's own when nothing is recorded, as after an import), but the definitions of crds/
// under create_replace (ReplaceDefinitions), which every upgrade applies: they are read like
// the objects, so that one changed or deleted in the cluster shows. how says how they are read
// and redacted.
func (r *Request) liveManifests(ctx context.Context, last *helmv1.Release, recorded *Recorded, how liveRead) (map[string]string, error) {
	failed := func(step ReadStep, err error) error {
		return &ReadError{Step: step, Revision: last.Version, Err: err}
	}
	if r.cluster == nil {
		return nil, failed(ReadLive, ErrNoHistory)
	}
	desired, err := manifest.SplitDocuments(last.Manifest)
	if err != nil {
		return nil, failed(ReadRecorded, err)
	}
	// The objects read are desired's from the index from on: all of them, or the definitions alone.
	from := 0
	if how.definitionsOnly {
		from = len(desired)
	}
	if r.ReplaceDefinitions {
		crds, err := recordedCRDs(last)
		if err != nil {
			return nil, failed(ReadRecorded, err)
		}
		desired = append(desired, crds...)
	}
	read, err := r.liveObjects(ctx, desired[from:])
	if err != nil {
		return nil, failed(ReadLive, err)
	}
	live := append(make([]manifest.Object, from, len(desired)), read...)
	rules := drift.NewRules(r.Ignore, desired)
	projected := slices.DeleteFunc(rules.ProjectAll(desired, live), func(obj manifest.Object) bool { return obj == nil })
	isNamespaced := r.Capabilities.IsNamespaced
	// Only the keys of the recorded objects are needed: they tell objects from hooks and CRDs.
	desiredKeys, err := manifest.Keys(desired, r.Namespace, isNamespaced)
	if err != nil {
		return nil, failed(ReadManifests, err)
	}
	redactor := how.imported
	if redactor == nil {
		redactor = r.liveRedactor(desired, recorded, how.rec)
	}
	// The plan hides the values of the chart's hook Secrets wherever they occur, as it hides
	// those of its other Secrets (a webhook's caBundle that is also a hook Secret's ca.crt):
	// the live objects are shown the same way, or each plan would show them as changed.
	var hooks chart.Rendered
	if err := hooks.AddHooks(last.Hooks); err != nil {
		return nil, failed(ReadManifests, err)
	}
	redactor = redactor.WithSecretsOf(slices.Concat(hooks.Hooks, hooks.TestHooks))
	if how.keep {
		r.setRedactor(redactor)
	}
	manifests, err := chart.RedactedManifests(&chart.Rendered{Objects: projected}, r.Namespace, redactor, isNamespaced)
	if err != nil {
		return nil, failed(ReadManifests, err)
	}
	extras := recorded.manifests()
	if len(extras) == 0 {
		// Imported: no earlier plan recorded the release's hooks and CRDs, so take them as Helm
		// recorded them; otherwise the first plan would add them and upgrade for nothing.
		imported := how.imported
		if imported == nil {
			imported = manifest.NewRedactor(r.sensitiveValues(), how.rec.Key, nil)
		}
		if extras, err = recordedHooksAndCRDs(last, &hooks, r.Namespace, imported, isNamespaced); err != nil {
			return nil, failed(ReadManifests, err)
		}
	}
	for k, v := range extras {
		if !desiredKeys[k] {
			manifests[k] = v
		}
	}
	return manifests, nil
}

// sensitiveValues are the values no manifest may show: the sensitive inputs and the
// repository password.
func (r *Request) sensitiveValues() []string {
	values := r.Values.SensitiveInputs()
	if p := r.Chart.Password; p != "" {
		values = append(values, p)
	}
	return values
}

// liveRedactor returns the redactor for the live objects of a release: it hides, besides the
// sensitive values, every scalar the recorded manifests show as a marker where what Helm
// applied (desired) has a value, so that what the plan found derived from a sensitive value
// stays hidden in the refreshed manifests. Without sensitive chart values, or when the record
// cannot be compared, it hides the sensitive values alone. Conservative manifests (an imported
// release's) are compared without sensitive values too.
func (r *Request) liveRedactor(desired []manifest.Object, recorded *Recorded, rec manifest.RedactionRecord) *manifest.Redactor {
	sensitive := r.sensitiveValues()
	plain := manifest.NewRedactor(sensitive, rec.Key, nil)
	if !rec.Conservative && len(r.Values.SetSensitive) == 0 && len(r.Values.SensitiveDocuments) == 0 {
		return plain
	}
	// Secrets are redacted whole anyway, and their values would be hidden in the others.
	notSecrets := slices.DeleteFunc(slices.Clone(desired), func(obj manifest.Object) bool {
		return obj["kind"] == "Secret" && obj["apiVersion"] == "v1"
	})
	applied, err := manifest.Manifests(notSecrets, r.Namespace, r.Capabilities.IsNamespaced)
	if err != nil {
		return plain
	}
	shownManifests := recorded.manifests()
	var real, shown []manifest.Object
	for _, key := range slices.Sorted(maps.Keys(applied)) {
		text, ok := shownManifests[key]
		if !ok {
			continue
		}
		a, errA := manifest.SplitDocuments(applied[key])
		b, errB := manifest.SplitDocuments(text)
		if errA != nil || errB != nil || len(a) != 1 || len(b) != 1 {
			return plain
		}
		real, shown = append(real, a[0]), append(shown, b[0])
	}
	derived, err := manifest.FindDerived(real, nil, shown)
	if err != nil {
		return plain
	}
	return manifest.NewRedactor(sensitive, rec.Key, derived)
}

// recordedHooksAndCRDs returns the manifests of the release's hooks (parsed from its record
// into hooks) and of its chart's CRDs as Helm recorded them for the release's last revision.
func recordedHooksAndCRDs(rel *helmv1.Release, hooks *chart.Rendered, namespace string, redactor *manifest.Redactor, isNamespaced func(apiVersion, kind string) bool) (map[string]string, error) {
	crds, err := recordedCRDs(rel)
	if err != nil || len(hooks.Hooks)+len(crds) == 0 {
		return nil, err
	}
	recorded := *hooks
	recorded.CRDs = crds
	return chart.RedactedManifests(&recorded, namespace, redactor, isNamespaced)
}

// recordedExtras returns the release's hooks (test hooks apart) and its chart's CRDs as Helm
// recorded them for the release's last revision.
func recordedExtras(rel *helmv1.Release) (*chart.Rendered, error) {
	var recorded chart.Rendered
	if err := recorded.AddHooks(rel.Hooks); err != nil {
		return nil, err
	}
	crds, err := recordedCRDs(rel)
	if err != nil {
		return nil, err
	}
	recorded.CRDs = crds
	return &recorded, nil
}

// recordedCRDs returns the CRDs of the chart Helm recorded for the release.
func recordedCRDs(rel *helmv1.Release) ([]manifest.Object, error) {
	if rel.Chart == nil {
		return nil, nil
	}
	var crds []manifest.Object
	for _, crd := range rel.Chart.CRDObjects() {
		objs, err := manifest.SplitDocuments(string(crd.File.Data))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", crd.Filename, err)
		}
		crds = append(crds, objs...)
	}
	return crds, nil
}
