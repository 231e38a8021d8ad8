package provider

import (
	"testing"
	"time"

	helmv1 "helm.sh/helm/v4/pkg/release/v1"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/release"
)

// A refresh's history is handed once, to the next request of the same release, while recent;
// one that could not be read is never handed on.
func TestRefreshedHistories_handOnceWhileRecent(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	h := &refreshedHistories{now: func() time.Time { return now }}
	read := release.HistoryOf(&helmv1.Release{Name: "app", Version: 3})

	h.put("review/app", read)
	if _, ok := h.take("review/other"); ok {
		t.Fatal("another release's history was handed on")
	}
	got, ok := h.take("review/app")
	if !ok || len(got.Revisions) != 1 || got.Revisions[0].Version != 3 {
		t.Fatalf("take = %+v, %v; want revision 3", got, ok)
	}
	if _, ok := h.take("review/app"); ok {
		t.Fatal("the history was handed on twice")
	}

	h.put("review/app", read)
	now = now.Add(refreshedHistoryFor + time.Second)
	if _, ok := h.take("review/app"); ok {
		t.Fatal("a history older than refreshedHistoryFor was handed on")
	}

	h.put("review/app", release.History{Err: release.ErrNoHistory})
	if _, ok := h.take("review/app"); ok {
		t.Fatal("a history that was not read was handed on")
	}

	var zero refreshedHistories
	if _, ok := zero.take("review/app"); ok {
		t.Fatal("an empty memo handed on a history")
	}
}
