package release

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chart"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/helmrelease"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/validate"
)

// Checker is what the plan's checks ask of the cluster (helmrelease.Client).
type Checker interface {
	// ServerSchemas returns the API server's schemas of gvs; what it could not fetch is left
	// out, and the errors say why.
	ServerSchemas(ctx context.Context, gvs []schema.GroupVersion) (map[schema.GroupVersion]*validate.ServerSchema, []error)
	// StoredVersions returns a CustomResourceDefinition's status.storedVersions, and whether
	// it exists.
	StoredVersions(ctx context.Context, name string) ([]string, bool, error)
	// Serves reports whether discovery serves kind in apiVersion.
	Serves(apiVersion, kind string) (bool, error)
	// Namespace reads a namespace: whether it exists, is being deleted, and its labels.
	Namespace(ctx context.Context, name string) (helmrelease.Namespace, error)
	// DryRun dry-runs objs, the answers in their order.
	DryRun(ctx context.Context, objs []manifest.Object) ([]helmrelease.DryRunAnswer, error)
}

// ErrNoCluster is why a check that needs the cluster did not run when there is none.
var ErrNoCluster = errors.New("the provider has no cluster connection")

// Checked is what the plan's checks of a rendering found: what validate found against the
// target version and the schemas, the chart's definitions that drop a stored version, and
// what the server-side dry run of the changed objects answered.
type Checked struct {
	// Target is the Kubernetes version checked against, zero when not known (Helm's defaults
	// stand in for an unknown cluster, and only fields are checked).
	Target validate.Version
	// ClusterSchemas says fields were checked against the cluster's own schemas; SchemaErrors
	// say why some or all of them were not available.
	ClusterSchemas bool
	SchemaErrors   []error
	Findings       []validate.Finding
	// Dropped are the chart's changed definitions (crd_policy create_replace) that no longer
	// list a version the cluster still stores objects in; StoredVersionErrors say which could
	// not be read.
	Dropped             []DroppedVersions
	StoredVersionErrors []error
	// DryRun is nil when no dry run was asked for, or the checks above found errors.
	DryRun *DryRunChecked
	// Running are the objects the apply leaves as they are whose pods the level the plan of the
	// environment sets forbids: the pods running keep running, the API server refuses new ones.
	Running []PodSecurityRefusal
}

// DroppedVersions is a definition of the chart that drops versions the cluster stores.
type DroppedVersions struct {
	Key, Name string
	Versions  []string
}

// DryRunChecked is what the server-side dry run of the changed objects answered.
type DryRunChecked struct {
	// Skipped is why nothing was dry-run: no cluster, or no client to ask with.
	Skipped error
	// NamespaceMissing says the release's namespace does not exist yet (a new environment in
	// the same plan): only cluster-scoped objects were dry-run.
	NamespaceMissing bool
	// NamespaceTerminating says the release's namespace is being deleted: as with
	// NamespaceMissing, only cluster-scoped objects were dry-run.
	NamespaceTerminating bool
	// PodSecurityLevels are the levels the dry run's Pod Security warnings are read against.
	PodSecurityLevels
	// Outcomes are the answers, by object.
	Outcomes []DryRunOutcome
	// PodSecurity are the changed objects whose pods the level the plan of the environment sets
	// (Inputs.PodSecurity) forbids. The dry run cannot tell: the API server evaluates the level
	// the namespace enforces when it answers, and nothing in a namespace the apply creates.
	PodSecurity []PodSecurityRefusal
	// NotServed are the objects of kinds the chart or crds_from defines and the cluster does
	// not serve yet: checked against their definitions, not dry-run, or dry-run and answered
	// that the kind is not served (discovery could not tell before).
	NotServed []string
}

// PodSecurityLevels are the Pod Security level the release's pods will meet, which a dry run's
// warnings are read against.
type PodSecurityLevels struct {
	// Enforce is the Pod Security level the namespace enforces, or the one the plan of its
	// environment sets (Inputs.PodSecurity), empty when none or unknown.
	Enforce string
	// Replaced is the level the namespace enforces now when the environment's plan sets another
	// level or policy version: the dry run's warnings about it are about what the apply replaces.
	Replaced string
	// Planned says Enforce and Version are those the environment's plan sets, not yet the
	// namespace's.
	Planned bool
	// Version is the policy version Enforce is evaluated at (the enforce-version label), empty
	// for the latest.
	Version string
}

// ReadWarning reads a dry run's warning that pods violate level: refuses says it is the level
// the pods will meet, so they would never be created; replaced that it is about the level, or
// the policy version, the apply replaces, and says nothing of what the pods will meet.
func (l PodSecurityLevels) ReadWarning(level string) (refuses, replaced bool) {
	if l.Replaced != "" && level == l.Replaced {
		return false, true
	}
	return l.Enforce != "" && level == l.Enforce, false
}

// DryRunOutcome is the dry run's answer for one changed object.
type DryRunOutcome struct {
	Key, Source string
	// Unchanged marks an object whose manifest did not change, dry-run because it holds nulls.
	Unchanged bool
	// Nulls are the paths of the object's nulls (manifest.NullFields).
	Nulls []string
	helmrelease.DryRunAnswer
}

// PodSecurityRefusal is an object whose pods a Pod Security level forbids: Forbidden is what it
// forbids, as Pod Security admission words it; Planned says the level is the one the
// environment's plan sets, not yet the namespace's.
type PodSecurityRefusal struct {
	Key, Source, Level, Forbidden string
	// Version is the policy version the level was evaluated at as the namespace names it:
	// "latest", or its enforce-version label.
	Version string
	Planned bool
	// Test says the object is a test hook, which RunTests runs after the apply: it is not among
	// the release's manifests.
	Test bool
}

// Violation is what the level forbids, worded as Pod Security admission words a warning:
// `would violate PodSecurity "<level>:<version>": <what>`.
func (r PodSecurityRefusal) Violation() string {
	return fmt.Sprintf("would violate PodSecurity %q: %s", r.Level+":"+r.Version, r.Forbidden)
}

// PodSecurityVersionLabel is the namespace label that pins the policy version of the enforced level.
const PodSecurityVersionLabel = "pod-security.kubernetes.io/enforce-version"

// CheckLevel is how far a plan checks (plan_checks).
type CheckLevel string

const (
	CheckAll     CheckLevel = "all"     // the cluster's schemas and a server-side dry run of the changed objects
	CheckOffline CheckLevel = "offline" // the target version and the shipped schemas
	CheckNone    CheckLevel = "none"
)

// PodSecurityEnforceLabel is the namespace label that sets the Pod Security level pods must meet.
const PodSecurityEnforceLabel = "pod-security.kubernetes.io/enforce"

// Check refuses, at plan time, what the apply of plan's rendering over recorded would fail on:
// API versions the target Kubernetes version does not serve (deprecated ones warn), fields the
// kinds' schemas do not accept (the cluster's own with CheckAll, else those shipped), the
// chart's definitions that drop a stored version, and, when none of those is an error, what a
// server-side dry run of the objects that change refuses, and the pods of the hooks the apply
// runs that the Pod Security level they will meet forbids. c is nil without a cluster, and
// unreachable says why.
func (r *Request) Check(ctx context.Context, plan *Plan, recorded *Recorded, level CheckLevel, c Checker, unreachable error) *Checked {
	out := &Checked{}
	if level == CheckNone {
		return out
	}
	rendered := plan.Rendering
	objs := r.validateObjects(rendered)
	previous := recorded.manifests()
	var changed, hooks []changedObject
	if level == CheckAll {
		changed, hooks = r.changed(rendered, previous), r.hooksRun(rendered, plan.Next.Operation)
	}
	var ahead *checksAhead
	if level == CheckAll {
		ahead = r.checksAhead
	}
	var namespace namespaceRead
	if c != nil && len(changed)+len(hooks) > 0 {
		// The dry run and the hooks' evaluation need the namespace's labels: they are read
		// while the schemas are, one round trip through the agent's tunnel instead of two.
		namespace = ahead.namespaceRead(ctx, c, r.Namespace)
	}
	out.Target, _ = validate.ParseVersion(r.Capabilities.KubeVersion)
	opts := validate.Options{Target: out.Target, Definitions: r.Definitions}
	if level == CheckAll && c != nil {
		opts.Server, out.SchemaErrors = ahead.serverSchemas(ctx, c, groupVersionsOf(objs))
		out.ClusterSchemas = len(opts.Server) > 0
	}
	opts, errs := opts.Prepared(objs)
	out.SchemaErrors = append(out.SchemaErrors, errs...)
	out.Findings = validate.Check(objs, opts)
	if level != CheckAll {
		return out
	}
	if c != nil && r.ReplaceDefinitions {
		out.Dropped, out.StoredVersionErrors = r.droppedVersions(ctx, rendered, previous, c)
	}
	if len(out.Dropped) > 0 || slices.ContainsFunc(out.Findings, validate.Finding.IsError) {
		return out
	}
	defined := validate.DefinedKinds(slices.Concat(objs, opts.Definitions))
	out.DryRun = r.dryRun(ctx, changed, hooks, defined, c, namespace, unreachable)
	switch d := out.DryRun; {
	case d == nil && c != nil:
		// Nothing to dry-run (the chart's version alone changes): the pods are evaluated as for
		// a plan that leaves the release as it is.
		out.Running = r.runningPodSecurityOf(ctx, rendered, recorded, c, ahead)
	case d != nil && !d.NamespaceMissing && !d.NamespaceTerminating:
		out.Running = r.runningPodSecurity(rendered, previous, d.PodSecurityLevels)
	}
	return out
}

// RunningPodSecurity evaluates, for a plan that leaves the release as it is (Plan.Unchanged),
// the pods of its objects against the Pod Security level the plan of its environment sets where
// the namespace does not enforce it yet: the apply changes the namespace's label alone, the pods
// running keep running, and the API server refuses every new one (a restart, a rollout, a
// scale-up). It asks c for the namespace only when that plan sets a level.
func (r *Request) RunningPodSecurity(ctx context.Context, rendered *Rendering, recorded *Recorded, c Checker) []PodSecurityRefusal {
	return r.runningPodSecurityOf(ctx, rendered, recorded, c, nil)
}

// runningPodSecurityOf is RunningPodSecurity taking the namespace read ahead, when it was.
func (r *Request) runningPodSecurityOf(ctx context.Context, rendered *Rendering, recorded *Recorded, c Checker, ahead *checksAhead) []PodSecurityRefusal {
	if r.PodSecurity == nil || c == nil {
		return nil
	}
	ns, err := ahead.namespaceRead(ctx, c, r.Namespace)()
	if err != nil || !ns.Exists || ns.Terminating {
		return nil
	}
	return r.runningPodSecurity(rendered, recorded.manifests(), r.podSecurityLevels(ns, nil))
}

// runningPodSecurity evaluates against l, when it is the level the environment's plan sets, the
// pods of the objects of rendered whose manifests previous holds as they are.
func (r *Request) runningPodSecurity(rendered *Rendering, previous map[string]string, l PodSecurityLevels) []PodSecurityRefusal {
	if !l.Planned {
		return nil
	}
	rr := rendered.Rendered
	var objs []changedObject
	for i, obj := range rr.Objects {
		key := r.Redactor.Key(obj, r.Namespace)
		if text, ok := previous[key]; ok && text == rendered.Manifests[key] {
			objs = append(objs, changedObject{key: key, source: sourceAt(rr.ObjectSources, i), object: obj})
		}
	}
	return r.podSecurity(objs, l)
}

// hooksRun are the rendered hooks Helm runs in an apply of op (pre- and post-install on an
// install, pre- and post-upgrade on an upgrade), as its sorter reads their events, and the test
// hooks with RunTests, which run after it.
func (r *Request) hooksRun(rendered *Rendering, op helmrelease.Operation) []changedObject {
	events := []string{"pre-install", "post-install"}
	if op == helmrelease.OperationUpgrade {
		events = []string{"pre-upgrade", "post-upgrade"}
	}
	rr := rendered.Rendered
	var out []changedObject
	for i, h := range rr.Hooks {
		if chart.HookRunsOn(h, events...) {
			out = append(out, changedObject{key: r.Redactor.Key(h, r.Namespace), source: sourceAt(rr.HookSources, i), object: h})
		}
	}
	if r.RunTests {
		for i, h := range rr.TestHooks {
			out = append(out, changedObject{key: r.Redactor.Key(h, r.Namespace), source: sourceAt(rr.TestHookSources, i), object: h, test: true})
		}
	}
	return out
}

// podSecurityLevels are the Pod Security level and policy version the release's pods will meet
// at the apply: those the plan of its environment sets (Inputs.PodSecurity) where they are not
// the namespace's yet, else the namespace's own, none in a namespace being deleted or unknown.
func (r *Request) podSecurityLevels(ns helmrelease.Namespace, err error) PodSecurityLevels {
	var l PodSecurityLevels
	if err == nil && ns.Exists && !ns.Terminating {
		l.Enforce, l.Version = ns.Labels[PodSecurityEnforceLabel], ns.Labels[PodSecurityVersionLabel]
	}
	if p := r.PodSecurity; p != nil && (p.Enforce != l.Enforce || p.Version != l.Version) {
		l = PodSecurityLevels{Enforce: p.Enforce, Version: p.Version, Replaced: l.Enforce, Planned: true}
	}
	return l
}

// podSecurity evaluates the pods of objs against the level of l, with Pod Security admission's
// own checks (validate.PodSecurity). Objects dry-run only for their nulls are applied as they
// are, and make no new pods.
func (r *Request) podSecurity(objs []changedObject, l PodSecurityLevels) []PodSecurityRefusal {
	if l.Enforce == "" {
		return nil
	}
	target, _ := validate.ParseVersion(r.Capabilities.KubeVersion)
	var refused []PodSecurityRefusal
	for _, o := range objs {
		if o.unchanged {
			continue
		}
		if forbidden, _ := validate.PodSecurity(o.object, l.Enforce, l.Version, target); forbidden != "" {
			refused = append(refused, PodSecurityRefusal{Key: o.key, Source: o.source, Level: l.Enforce, Version: cmp.Or(l.Version, "latest"),
				Forbidden: forbidden, Planned: l.Planned, Test: o.test})
		}
	}
	return refused
}

// checksAhead is what CheckAhead started for Check: the release's namespace, and the
// cluster's schemas of the group versions of the kinds recorded, with their field checks built.
type checksAhead struct {
	gvs       []schema.GroupVersion
	namespace namespaceRead
	done      chan struct{}
	schemas   map[schema.GroupVersion]*validate.ServerSchema
	errs      []error
}

// CheckAhead starts, for a plan over recorded whose inputs differ from the state's, what Check
// reads first when level is CheckAll: the release's namespace and the cluster's schemas of the
// group versions of the kinds recorded, the field checks of those kinds built (a ServerSchema
// keeps them). They are read while the plan renders: through the agent's tunnel their round
// trip overlaps the rendering; on a loopback cluster the two share the cores (the rendering of
// a 100-object plan took longer, the checks less, about as much in all). Check takes the
// schemas when its rendering has exactly those group versions, and asks c for its own
// otherwise; a plan that finds nothing changed takes neither.
func (r *Request) CheckAhead(ctx context.Context, recorded *Recorded, level CheckLevel, c Checker) {
	if level != CheckAll || c == nil {
		return
	}
	kinds := recorded.kinds()
	if len(kinds) == 0 {
		return
	}
	a := &checksAhead{namespace: readNamespace(ctx, c, r.Namespace), done: make(chan struct{})}
	for _, gvk := range kinds {
		if gv := gvk.GroupVersion(); !slices.Contains(a.gvs, gv) {
			a.gvs = append(a.gvs, gv)
		}
	}
	go func() {
		defer close(a.done)
		a.schemas, a.errs = c.ServerSchemas(ctx, a.gvs)
		_, _ = validate.Options{Server: a.schemas}.PreparedFor(kinds) // Check's Prepared reports what fails
	}()
	r.checksAhead = a
}

// serverSchemas returns the cluster's schemas of gvs: those read ahead when they are of exactly
// gvs, else c's answer.
func (a *checksAhead) serverSchemas(ctx context.Context, c Checker, gvs []schema.GroupVersion) (map[schema.GroupVersion]*validate.ServerSchema, []error) {
	if a == nil || len(a.gvs) != len(gvs) || slices.ContainsFunc(gvs, func(gv schema.GroupVersion) bool { return !slices.Contains(a.gvs, gv) }) {
		return c.ServerSchemas(ctx, gvs)
	}
	select {
	case <-a.done:
		return a.schemas, a.errs
	case <-ctx.Done():
		return nil, []error{ctx.Err()}
	}
}

// namespaceRead returns the namespace read ahead, else starts reading it from c.
func (a *checksAhead) namespaceRead(ctx context.Context, c Checker, name string) namespaceRead {
	if a == nil {
		return readNamespace(ctx, c, name)
	}
	return a.namespace
}

// kinds returns the kinds of the recorded manifests, each once: the kind of a manifest's key,
// in the API version its apiVersion line names. A manifest whose key or apiVersion cannot be
// read is left out.
func (rec *Recorded) kinds() []schema.GroupVersionKind {
	var kinds []schema.GroupVersionKind
	for key, text := range rec.manifests() {
		named, ok := nameRecorded(key, text)
		if !ok {
			continue
		}
		if gvk := named.gv.WithKind(named.kind); !slices.Contains(kinds, gvk) {
			kinds = append(kinds, gvk)
		}
	}
	return kinds
}

// namespaceRead waits for the release's namespace, read in the background.
type namespaceRead func() (helmrelease.Namespace, error)

func readNamespace(ctx context.Context, c Checker, name string) namespaceRead {
	type answer struct {
		ns  helmrelease.Namespace
		err error
	}
	done := make(chan answer, 1)
	go func() {
		ns, err := c.Namespace(ctx, name)
		done <- answer{ns, err}
	}()
	var once sync.Once
	var a answer
	return func() (helmrelease.Namespace, error) {
		once.Do(func() { a = <-done })
		return a.ns, a.err
	}
}

// validateObjects pairs every rendered object (CRDs, objects, hooks) with its manifest key and
// chart file.
func (r *Request) validateObjects(rendered *Rendering) []validate.Object {
	rr := rendered.Rendered
	objs := make([]validate.Object, 0, len(rr.CRDs)+len(rr.Objects)+len(rr.Hooks))
	add := func(items []manifest.Object, sources []string) {
		for i, o := range items {
			objs = append(objs, validate.Object{Key: r.Redactor.Key(o, r.Namespace), Source: sourceAt(sources, i), Object: o})
		}
	}
	add(rr.CRDs, rr.CRDSources)
	add(rr.Objects, rr.ObjectSources)
	add(rr.Hooks, rr.HookSources)
	return objs
}

func sourceAt(sources []string, i int) string {
	if i < len(sources) {
		return sources[i]
	}
	return ""
}

// groupVersionsOf returns the distinct group versions of objs, in their order.
func groupVersionsOf(objs []validate.Object) []schema.GroupVersion {
	seen := map[schema.GroupVersion]bool{}
	var out []schema.GroupVersion
	for _, o := range objs {
		apiVersion, _ := o.Object["apiVersion"].(string)
		gv, err := schema.ParseGroupVersion(apiVersion)
		if err != nil || apiVersion == "" || seen[gv] {
			continue
		}
		seen[gv] = true
		out = append(out, gv)
	}
	return out
}

// droppedVersions returns the chart's definitions that changed since previous and no longer
// list a version the cluster's definition still records in status.storedVersions: the API
// server would refuse the replacement, and objects may be stored in that version.
func (r *Request) droppedVersions(ctx context.Context, rendered *Rendering, previous map[string]string, c Checker) ([]DroppedVersions, []error) {
	var dropped []DroppedVersions
	var errs []error
	for _, crd := range rendered.Rendered.CRDs {
		key := r.Redactor.Key(crd, r.Namespace)
		if text, ok := previous[key]; ok && text == rendered.Manifests[key] {
			continue
		}
		name := DefinitionName(key)
		stored, exists, err := c.StoredVersions(ctx, name)
		if err != nil {
			errs = append(errs, err)
		}
		if !exists {
			continue
		}
		if versions, err := validate.DroppedStoredVersions(crd, stored); err == nil && len(versions) > 0 {
			dropped = append(dropped, DroppedVersions{Key: key, Name: name, Versions: versions})
		}
	}
	return dropped, errs
}

// changedObject is an object of the release whose manifest the plan changes, in the namespace
// it goes to.
type changedObject struct {
	key, source string
	object      manifest.Object
	// unchanged marks an object whose manifest did not change, dry-run for its nulls.
	unchanged bool
	// test marks a test hook, which run_tests runs after the apply.
	test  bool
	nulls []string // manifest.NullFields
}

// changed returns the rendered objects (hooks and CRDs aside: Helm recreates hooks and never
// upgrades CRDs) whose manifests differ from previous, copied, with the release's namespace set
// on the namespaced ones. When any did, the upgrade applies every object, and those that did not
// change but hold a null (manifest.NullFields) come too: the manifests leave nulls out, the API
// server dropped them at creation and may have filled in a default, and a server-side apply
// takes them as asking to remove it, which it may refuse however the release changes.
func (r *Request) changed(rendered *Rendering, previous map[string]string) []changedObject {
	var out []changedObject
	var unchanged []int
	for i, obj := range rendered.Rendered.Objects {
		key := r.Redactor.Key(obj, r.Namespace)
		if text, ok := previous[key]; ok && text == rendered.Manifests[key] {
			unchanged = append(unchanged, i)
			continue
		}
		o := r.toDryRun(rendered, i, key)
		o.nulls = manifest.NullFields(obj)
		out = append(out, o)
	}
	if len(out) == 0 {
		return nil // no upgrade: nothing is applied
	}
	for _, i := range unchanged {
		obj := rendered.Rendered.Objects[i]
		if nulls := manifest.NullFields(obj); len(nulls) > 0 {
			o := r.toDryRun(rendered, i, r.Redactor.Key(obj, r.Namespace))
			o.unchanged, o.nulls = true, nulls
			out = append(out, o)
		}
	}
	return out
}

// toDryRun is the i-th rendered object, keyed key, copied with the release's namespace set when
// it is namespaced.
func (r *Request) toDryRun(rendered *Rendering, i int, key string) changedObject {
	obj := rendered.Rendered.Objects[i]
	copied, _ := manifest.DeepCopy(obj).(map[string]any)
	if r.namespaced(obj) {
		if meta, ok := copied["metadata"].(map[string]any); ok && meta["namespace"] == nil {
			meta["namespace"] = r.Namespace
		}
	}
	return changedObject{key: key, source: sourceAt(rendered.Rendered.ObjectSources, i), object: copied}
}

// namespaced reports whether obj's kind goes into a namespace.
func (r *Request) namespaced(obj manifest.Object) bool {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	return r.Capabilities.IsNamespaced(apiVersion, kind)
}

// dryRun sends every object the plan changes to the API server as a server-side dry run
// (nothing is written). Objects of kinds that defined holds and the cluster does not serve yet
// are not dry-run: the plan checked them against those definitions. In a namespace that does
// not exist yet, or is being deleted, only cluster-scoped objects are. The pods the dry run
// cannot check are evaluated against the level they will meet: those of changed objects where
// the environment's plan sets a level the namespace does not enforce yet, and those of the
// hooks the apply runs, which Helm creates while it applies.
func (r *Request) dryRun(ctx context.Context, changed, hooks []changedObject, defined map[schema.GroupKind]bool, c Checker, namespace namespaceRead, unreachable error) *DryRunChecked {
	if len(changed) == 0 && (len(hooks) == 0 || c == nil) {
		return nil
	}
	out := &DryRunChecked{}
	if c == nil {
		out.Skipped = unreachable
		if out.Skipped == nil {
			out.Skipped = ErrNoCluster
		}
		return out
	}
	changed, out.NotServed = notServedYet(c, changed, defined)
	ns, err := namespace()
	out.PodSecurityLevels = r.podSecurityLevels(ns, err)
	if out.Planned {
		out.PodSecurity = r.podSecurity(changed, out.PodSecurityLevels)
	}
	out.PodSecurity = append(out.PodSecurity, r.podSecurity(hooks, out.PodSecurityLevels)...)
	switch {
	case err != nil:
		// Unknown: every object is dry-run, and the dry run says what the API server makes of it.
	case !ns.Exists:
		out.NamespaceMissing = true
		changed = slices.DeleteFunc(changed, func(o changedObject) bool { return r.namespaced(o.object) })
	case ns.Terminating:
		// The API server refuses every new object in it; the environment's apply waits for it
		// to go and creates it again before the release is applied, and a destroy plans no
		// object at all.
		out.NamespaceTerminating = true
		changed = slices.DeleteFunc(changed, func(o changedObject) bool { return r.namespaced(o.object) })
	}
	if len(changed) == 0 {
		return out
	}
	objs := make([]manifest.Object, len(changed))
	for i, o := range changed {
		objs[i] = o.object
	}
	answers, err := c.DryRun(ctx, objs)
	if err != nil {
		out.Skipped = err
		return out
	}
	for i, o := range changed {
		if answers[i].Unserved && defined[groupKindOf(o.object)] {
			out.NotServed = append(out.NotServed, o.key)
			continue
		}
		out.Outcomes = append(out.Outcomes, DryRunOutcome{Key: o.key, Source: o.source, Unchanged: o.unchanged, Nulls: o.nulls, DryRunAnswer: answers[i]})
	}
	return out
}

// notServedYet splits objs into those the dry run can check and the keys of those of kinds
// defined holds that the cluster does not serve yet: the apply creates, or waits for, their
// definitions first, so they are checked offline only. Discovery is asked once per kind.
func notServedYet(c Checker, objs []changedObject, defined map[schema.GroupKind]bool) ([]changedObject, []string) {
	var checkable []changedObject
	var keys []string
	unserved := map[string]bool{}
	for _, o := range objs {
		apiVersion, _ := o.object["apiVersion"].(string)
		kind, _ := o.object["kind"].(string)
		if defined[groupKindOf(o.object)] {
			id := apiVersion + "/" + kind
			known, asked := unserved[id]
			if !asked {
				served, err := c.Serves(apiVersion, kind)
				known = err == nil && !served
				unserved[id] = known
			}
			if known {
				keys = append(keys, o.key)
				continue
			}
		}
		checkable = append(checkable, o)
	}
	return checkable, keys
}

// groupKindOf returns the group and kind of obj.
func groupKindOf(obj manifest.Object) schema.GroupKind {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	gv, _ := schema.ParseGroupVersion(apiVersion)
	return schema.GroupKind{Group: gv.Group, Kind: kind}
}
