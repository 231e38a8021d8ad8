// Package release is the core of a Helm release's life, free of Terraform's framework: what
// one plan, apply or refresh of a release reads of the cluster, read once and handed to every
// step that needs it.
package release

import (
	"context"
	"errors"
	"fmt"
	"sync"

	rcommon "helm.sh/helm/v4/pkg/release/common"
	helmv1 "helm.sh/helm/v4/pkg/release/v1"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chart"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/helmrelease"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// Cluster is what a request reads of the cluster: the release's record in Helm's storage,
// and the objects a chart's lookup answers from (helmrelease.Client).
type Cluster interface {
	// History returns the stored revisions of the release, none when it does not exist: the
	// version and status of each, and whole the records helmrelease.Wanted names. expect, when
	// not 0, is the version the state records, read while the rest is.
	History(ctx context.Context, namespace, name string, expect int) (helmrelease.Stored, error)
	// Revisions returns the version and status of each stored revision of the release, oldest
	// first, none when it does not exist, with no record read whole.
	Revisions(ctx context.Context, namespace, name string) ([]helmrelease.Revision, error)
	// Lookup answers a chart's lookup for a release in namespace.
	Lookup(namespace string) chart.Objects
	// LiveObjects returns, for each of objs, the object as it is in the cluster, nil for one
	// that does not exist.
	LiveObjects(ctx context.Context, namespace string, objs []manifest.Object) ([]manifest.Object, error)
}

// Request is one plan, apply or refresh of a release, prepared once: its inputs, Helm's
// history of it, read once, one source of lookup answers shared by every rendering of the
// request, and the chart, loaded once.
type Request struct {
	Inputs
	// History is what Helm's storage held when the request was prepared.
	History History
	// Lookup answers the lookups of every rendering of the request, each answer read once;
	// nil without a cluster, where lookup finds nothing (as with helm template).
	Lookup chart.Objects
	loaded *loadedChart
	// cluster is where the live objects are read, nil without one.
	cluster Cluster
	// readAhead holds the live objects a refresh read while it read the history
	// (PrepareRefresh), by identity; nil when none were.
	readAhead map[string]manifest.Object
	// checksAhead holds what CheckAhead started reading for Check; nil when it was not called.
	checksAhead *checksAhead
	// lastApplied are the documents of the revision of, as Prior reads them.
	lastApplied struct {
		of        *helmv1.Release
		documents []chart.Document
	}
}

// Prepare reads what a request for in needs of cluster, nil when there is none (a plan with
// the provider's kube_version, or a cluster that cannot be reached). recorded is the release
// as the state records it, nil for none: the record of the revision it names is read while
// Helm's history is listed, as a refresh reads it, so that through the GitLab agent's tunnel
// the usual history is one round trip, not the list and then the records it names.
func Prepare(ctx context.Context, cluster Cluster, in Inputs, recorded *Recorded) *Request {
	return prepare(ctx, cluster, in, recorded.revision())
}

// prepare is Prepare, with expect the revision the state records (0 for none or unknown).
func prepare(ctx context.Context, cluster Cluster, in Inputs, expect int) *Request {
	req := &Request{Inputs: in}
	if cluster == nil {
		return req
	}
	stored, err := cluster.History(ctx, in.Namespace, in.Name, expect)
	return req.on(cluster, History{Read: err == nil, Revisions: stored.Revisions, Records: stored.Records, Err: err})
}

// PrepareWithHistory prepares a request for in as Prepare does, with the history h a refresh
// of the same release read just before instead of reading it again.
func PrepareWithHistory(cluster Cluster, in Inputs, h History) *Request {
	req := &Request{Inputs: in}
	if cluster == nil {
		return req
	}
	return req.on(cluster, h)
}

func (r *Request) on(cluster Cluster, h History) *Request {
	r.cluster, r.History = cluster, h
	r.Lookup = &onceObjects{objects: cluster.Lookup(r.Namespace), read: map[lookupCall]lookupAnswer{}}
	return r
}

// History is a snapshot of a release's revisions in Helm's storage.
type History struct {
	// Read says the snapshot was read from the cluster; without it, Err says why not, or
	// there was no cluster to read.
	Read bool
	Err  error
	// Revisions are the version and status of every stored revision, oldest first.
	Revisions []helmrelease.Revision
	// Records are the revisions read whole (helmrelease.Wanted: the newest, and the ones the
	// next apply compares with or rolls back to), oldest first.
	Records []*helmv1.Release
}

// HistoryOf is the history of records read whole, every one of them.
func HistoryOf(records ...*helmv1.Release) History {
	stored := helmrelease.StoredOf(records)
	return History{Read: true, Revisions: stored.Revisions, Records: stored.Records}
}

// record returns the record of revision version read whole, nil when it was not.
func (h History) record(version int) *helmv1.Release {
	for _, r := range h.Records {
		if r != nil && r.Version == version {
			return r
		}
	}
	return nil
}

// ErrNoHistory is returned for a history that was not read from a cluster.
var ErrNoHistory = errors.New("the release's history was not read: no cluster")

// unread returns why h was not read.
func (h History) unread() error {
	if h.Err != nil {
		return h.Err
	}
	return ErrNoHistory
}

// Last returns the newest revision of the release, or helmrelease.ErrNotFound. A release
// whose newest revision is uninstalled (a kept history) counts as not found.
func (h History) Last(namespace, name string) (*helmv1.Release, error) {
	if !h.Read {
		return nil, h.unread()
	}
	var last helmrelease.Revision
	for _, r := range h.Revisions {
		if r.Version > last.Version {
			last = r
		}
	}
	if last.Version == 0 || last.Status == rcommon.StatusUninstalled {
		return nil, fmt.Errorf("release %s in namespace %s: %w", name, namespace, helmrelease.ErrNotFound)
	}
	rel := h.record(last.Version)
	if rel == nil || rel.Info == nil {
		// Gone between the listing and the read of its record (a concurrent apply pruned it).
		return nil, fmt.Errorf("release %s in namespace %s: the record of revision %d could not be read", name, namespace, last.Version)
	}
	return rel, nil
}

// Next returns the next apply of the release claimed as claim, decided from its history.
func (h History) Next(claim helmrelease.Claim) (helmrelease.Next, error) {
	if !h.Read {
		return helmrelease.Next{}, h.unread()
	}
	return helmrelease.Decide(h.Revisions, claim), nil
}

// lookupCall is one question to the cluster's objects.
type lookupCall struct{ apiVersion, kind, namespace, name string }

// lookupAnswer is what the cluster's objects answered.
type lookupAnswer struct {
	content map[string]any
	err     error
}

// onceObjects answers each lookup from objects once, however many renderings ask.
type onceObjects struct {
	objects chart.Objects
	mu      sync.Mutex
	read    map[lookupCall]lookupAnswer
}

func (o *onceObjects) Lookup(ctx context.Context, apiVersion, kind, namespace, name string) (map[string]any, error) {
	call := lookupCall{apiVersion, kind, namespace, name}
	o.mu.Lock()
	defer o.mu.Unlock()
	a, ok := o.read[call]
	if !ok {
		a.content, a.err = o.objects.Lookup(ctx, apiVersion, kind, namespace, name)
		o.read[call] = a
	}
	copied, _ := manifest.DeepCopy(a.content).(map[string]any)
	return copied, a.err
}
