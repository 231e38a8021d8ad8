package helmrelease

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	rcommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/parallel"
)

// Stored is a release's history as a plan or an apply reads it: the version and status of
// every stored revision, and whole only the records it reads of them (Wanted).
type Stored struct {
	// Revisions are every stored revision, oldest first.
	Revisions []Revision
	// Records are the records of the revisions Wanted names, read whole, oldest first.
	Records []*release.Release
}

// StoredOf is the history of records, every one of them read whole, oldest first as given.
func StoredOf(records []*release.Release) Stored {
	return Stored{Revisions: revisionsOf(records), Records: records}
}

// Wanted returns the versions of history whose records a plan or an apply reads, oldest
// first: the newest (what the release holds, the documents drawn values are kept from), and
// the ones its next apply (Decide) compares its rendering with (UpgradesFrom) and rolls back to
// (RollbackTo). Every other revision is read for its version and status alone.
func Wanted(history []Revision) []int {
	next := Decide(history, Claim{Recorded: true})
	if next.Last.Version == 0 {
		return nil
	}
	wanted := []int{next.Last.Version}
	for _, v := range []int{next.UpgradesFrom, next.RollbackTo} {
		if v > 0 {
			wanted = append(wanted, v)
		}
	}
	slices.Sort(wanted)
	return slices.Compact(wanted)
}

// secrets are where Helm's storage keeps a release's records.
var secrets = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// History reads the release's stored revisions: the version and status of each from the
// labels Helm's storage keeps on its records (a LIST of their metadata alone), and whole, with
// a GET each, the records Wanted names. A history of ten revisions of a large release is
// then one record's bytes, not ten. expect, when not 0, is the version the state records: its
// record is read while the list is, so that when it is still the newest the history takes one
// round trip, as one LIST of the whole records did. No revision is none, without an error.
func (c *Client) History(ctx context.Context, namespace, name string, expect int) (Stored, error) {
	store := c.configuration(ctx, namespace, nil).Releases
	if c.clients.Metadata == nil {
		return c.wholeHistory(store, name)
	}
	var expected *release.Release
	var expectErr error
	read := make(chan struct{})
	go func() {
		defer close(read)
		if expect > 0 {
			expected, expectErr = c.record(store, name, expect)
		}
	}()
	revisions, labelled, err := c.listRevisions(ctx, namespace, name)
	<-read
	if err != nil {
		return Stored{}, err
	}
	if !labelled {
		return c.wholeHistory(store, name)
	}
	out := Stored{Revisions: revisions}
	wanted := Wanted(out.Revisions)
	records := make([]*release.Release, len(wanted))
	errs := make([]error, len(wanted))
	parallel.Each(len(wanted), readsAtOnce, func(i int) {
		if wanted[i] == expect && expectErr == nil && expected != nil {
			records[i] = expected
			return
		}
		records[i], errs[i] = c.record(store, name, wanted[i])
	})
	if err := errors.Join(errs...); err != nil {
		return Stored{}, err
	}
	for _, r := range records {
		if r != nil {
			out.Records = append(out.Records, r)
		}
	}
	return out, nil
}

// Revisions reads the version and status of each stored revision of the release, oldest
// first, with the LIST of History alone and no record read whole: what a decision about the
// release (Decide) needs, as when an object names a release other than its own.
func (c *Client) Revisions(ctx context.Context, namespace, name string) ([]Revision, error) {
	if c.clients.Metadata != nil {
		revisions, labelled, err := c.listRevisions(ctx, namespace, name)
		if err != nil || labelled {
			return revisions, err
		}
	}
	stored, err := c.wholeHistory(c.configuration(ctx, namespace, nil).Releases, name)
	return stored.Revisions, err
}

// listRevisions reads the version and status of each stored revision of the release from the
// labels Helm's storage keeps on its records, oldest first, with a LIST of their metadata.
// labelled is false when a record does not carry them as Helm's storage labels it: its history
// is then read as Helm reads it (wholeHistory).
func (c *Client) listRevisions(ctx context.Context, namespace, name string) (revisions []Revision, labelled bool, err error) {
	selector := labels.SelectorFromSet(labels.Set{"name": name, "owner": "helm"}).String()
	list, err := c.clients.Metadata.Resource(secrets).Namespace(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, false, fmt.Errorf("read history of release %s: %w", name, err)
	}
	for _, item := range list.Items {
		version, err := strconv.Atoi(item.Labels["version"])
		if err != nil || version <= 0 || item.Labels["status"] == "" {
			return nil, false, nil
		}
		revisions = append(revisions, Revision{Version: version, Status: rcommon.Status(item.Labels["status"])})
	}
	slices.SortFunc(revisions, func(a, b Revision) int { return a.Version - b.Version })
	return revisions, true, nil
}

// record reads the record of the release's revision version whole, nil when there is none.
func (c *Client) record(store *storage.Storage, name string, version int) (*release.Release, error) {
	r, err := store.Get(name, version)
	if errors.Is(err, driver.ErrReleaseNotFound) || apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read revision %d of release %s: %w", version, name, err)
	}
	return asRelease(r)
}

// wholeHistory reads every record of the release whole, as Helm's storage does.
func (c *Client) wholeHistory(store *storage.Storage, name string) (Stored, error) {
	history, err := releaseHistory(store, name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return Stored{}, nil
	}
	if err != nil {
		return Stored{}, fmt.Errorf("read history of release %s: %w", name, err)
	}
	slices.SortFunc(history, func(a, b *release.Release) int { return a.Version - b.Version })
	return StoredOf(history), nil
}
