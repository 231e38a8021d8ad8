package provider

import (
	"sync"
	"time"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/release"
)

// refreshedHistoryFor is how long the history a refresh read is handed to the plan after it.
const refreshedHistoryFor = 30 * time.Second

// releaseOp is what a release's request is prepared for.
type releaseOp int

const (
	opRefresh releaseOp = iota
	opPlan
	// opApply reads the history again, and drops what a refresh read before it.
	opApply
)

// refreshedHistories hands the history of a release that a refresh read to the plan that
// follows it in the same provider process, once: Terraform refreshes a resource and plans it
// right after, and through the GitLab agent's tunnel a second read is a round trip (and the
// release's records again) for what was just read. The plan is made against the refreshed
// state, as Terraform's own plans are; the apply always reads the history again.
type refreshedHistories struct {
	mu      sync.Mutex
	entries map[string]refreshedHistory
	// now is the clock; nil is time.Now.
	now func() time.Time
}

type refreshedHistory struct {
	history release.History
	at      time.Time
}

func (h *refreshedHistories) clock() time.Time {
	if h.now != nil {
		return h.now()
	}
	return time.Now()
}

// put keeps what the refresh of release id read, when it was read.
func (h *refreshedHistories) put(id string, history release.History) {
	if !history.Read {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.entries == nil {
		h.entries = map[string]refreshedHistory{}
	}
	h.entries[id] = refreshedHistory{history: history, at: h.clock()}
}

// take returns, once, what the last refresh of release id read, when it is recent enough.
func (h *refreshedHistories) take(id string) (release.History, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e, ok := h.entries[id]
	delete(h.entries, id)
	if !ok || h.clock().Sub(e.at) > refreshedHistoryFor {
		return release.History{}, false
	}
	return e.history, true
}
