package helmrelease

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	helmchart "helm.sh/helm/v4/pkg/chart/v2"
	helmkube "helm.sh/helm/v4/pkg/kube"
	kubefake "helm.sh/helm/v4/pkg/kube/fake"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	release "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"
)

// These tests keep Helm's records in its in-memory storage and give Helm a kube client that
// applies nothing: they check what recovery and cancellation write to the release's history.
// What they do to the objects in a cluster is checked against the local cluster by the
// provider's acceptance tests (release_resource_interrupt_test.go, release_resource_pending_test.go).

const testNamespace = "default"

func testChart() *helmchart.Chart {
	return &helmchart.Chart{
		Metadata: &helmchart.Metadata{APIVersion: "v2", Name: "app", Version: "0.1.0"},
		Templates: []*common.File{{Name: "templates/configmap.yaml", Data: []byte(
			"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  revision: {{ .Release.Revision | quote }}\n")}},
	}
}

// memoryConfiguration is an action configuration whose history starts as statuses (revision
// 1 first), stored in memory.
func memoryConfiguration(t *testing.T, kube helmkube.Interface, statuses ...rcommon.Status) *action.Configuration {
	t.Helper()
	releases := storage.Init(driver.NewMemory())
	for i, status := range statuses {
		rel := &release.Release{
			Name: "app", Namespace: testNamespace, Version: i + 1, Chart: testChart(), Config: map[string]any{},
			Manifest: fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  revision: \"%d\"\n", i+1),
			Info:     &release.Info{Status: status, Description: "stored by the test"},
		}
		if err := releases.Create(rel); err != nil {
			t.Fatal(err)
		}
	}
	if kube == nil {
		kube = &kubefake.PrintingKubeClient{Out: io.Discard}
	}
	// Helm's goroutines may still log after the test ends, where t.Logf would panic.
	cfg := &action.Configuration{Releases: releases, KubeClient: kube, Capabilities: common.DefaultCapabilities}
	cfg.SetLogger(slog.DiscardHandler)
	return cfg
}

func testClient(t *testing.T) *Client {
	return &Client{opts: Options{Log: func(msg string) { t.Log(msg) }}}
}

func testSpec() Spec {
	return Spec{Name: "app", Namespace: testNamespace, Chart: testChart(), Values: map[string]any{}, Timeout: time.Minute, RecoverPending: true}
}

// storedHistory returns the history as "version:status", oldest first.
func storedHistory(t *testing.T, cfg *action.Configuration) []string {
	t.Helper()
	history, err := readHistory(cfg, "app")
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(history, func(a, b Revision) int { return a.Version - b.Version })
	out := make([]string, len(history))
	for i, r := range history {
		out[i] = fmt.Sprintf("%d:%s", r.Version, r.Status)
	}
	return out
}

// storedRevision reads one revision of the release.
func storedRevision(cfg *action.Configuration, version int) (*release.Release, error) {
	stored, err := cfg.Releases.Get("app", version)
	if err != nil {
		return nil, err
	}
	return asRelease(stored)
}

// applyDecided decides the next apply from the stored history and carries it out.
func applyDecided(t *testing.T, cfg *action.Configuration, spec Spec) (Next, *Outcome, error) {
	t.Helper()
	history, err := readHistory(cfg, "app")
	if err != nil {
		t.Fatal(err)
	}
	next := Decide(history, Claim{Recorded: true})
	out, err := testClient(t).apply(context.Background(), cfg, spec, next)
	return next, out, err
}

func TestApply_recoversPendingReleases(t *testing.T) {
	tests := []struct {
		name      string
		history   []rcommon.Status
		want      []string
		recovered Recovered
		// description is that of the interrupted revision after recovery.
		description string
	}{
		{
			name:    "pending upgrade is rolled back, then upgraded",
			history: []rcommon.Status{rcommon.StatusSuperseded, rcommon.StatusDeployed, rcommon.StatusPendingUpgrade},
			want:    []string{"1:superseded", "2:superseded", "3:failed", "4:superseded", "5:deployed"},
			// The rollback to 2 is revision 4.
			recovered:   Recovered{Action: RecoveryRollback, Status: rcommon.StatusPendingUpgrade, Revision: 3, RolledBackTo: 2},
			description: "Interrupted while pending-upgrade",
		},
		{
			name:        "pending rollback is rolled back to the newest successful revision",
			history:     []rcommon.Status{rcommon.StatusSuperseded, rcommon.StatusFailed, rcommon.StatusPendingRollback},
			want:        []string{"1:superseded", "2:failed", "3:failed", "4:superseded", "5:deployed"},
			recovered:   Recovered{Action: RecoveryRollback, Status: rcommon.StatusPendingRollback, Revision: 3, RolledBackTo: 1},
			description: "Interrupted while pending-rollback",
		},
		{
			name:    "pending upgrade with no successful revision is marked failed, then upgraded",
			history: []rcommon.Status{rcommon.StatusFailed, rcommon.StatusPendingUpgrade},
			// Helm's upgrade supersedes the failed revision it upgraded from.
			want:        []string{"1:failed", "2:superseded", "3:deployed"},
			recovered:   Recovered{Action: RecoveryMarkFailed, Status: rcommon.StatusPendingUpgrade, Revision: 2},
			description: "Interrupted while pending-upgrade",
		},
		{
			name:      "pending install is uninstalled and installed afresh",
			history:   []rcommon.Status{rcommon.StatusPendingInstall},
			want:      []string{"1:deployed"},
			recovered: Recovered{Action: RecoveryUninstall, Status: rcommon.StatusPendingInstall, Revision: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := memoryConfiguration(t, nil, tt.history...)
			next, out, err := applyDecided(t, cfg, testSpec())
			if err != nil {
				t.Fatal(err)
			}
			if got := storedHistory(t, cfg); !slices.Equal(got, tt.want) {
				t.Errorf("history after the apply = %v, want %v", got, tt.want)
			}
			// The plan rendered next.Target: the revision written must be that one.
			if out.Release.Version != next.Target.Revision || out.Release.Config == nil {
				t.Errorf("the apply wrote revision %d, the decision rendered %d", out.Release.Version, next.Target.Revision)
			}
			if out.Recovered != tt.recovered {
				t.Errorf("Recovered = %+v, want %+v", out.Recovered, tt.recovered)
			}
			if tt.description != "" {
				interrupted, err := storedRevision(cfg, len(tt.history))
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(interrupted.Info.Description, tt.description) {
					t.Errorf("the interrupted revision's description is %q, want %q", interrupted.Info.Description, tt.description)
				}
			}
		})
	}
}

func TestApply_pendingReleaseIsRefusedWithoutRecovery(t *testing.T) {
	cfg := memoryConfiguration(t, nil, rcommon.StatusDeployed, rcommon.StatusPendingUpgrade)
	spec := testSpec()
	spec.RecoverPending = false
	_, _, err := applyDecided(t, cfg, spec)
	var pending *PendingError
	if !errors.As(err, &pending) || pending.Revision != 2 || pending.Status != rcommon.StatusPendingUpgrade {
		t.Fatalf("apply of a pending release without recovery = %v, want a PendingError for revision 2", err)
	}
	if got := storedHistory(t, cfg); !slices.Equal(got, []string{"1:deployed", "2:pending-upgrade"}) {
		t.Errorf("the refused apply changed the history: %v", got)
	}
}

func TestApply_historyChangedSinceTheDecisionIsRefused(t *testing.T) {
	cfg := memoryConfiguration(t, nil, rcommon.StatusDeployed)
	history, err := readHistory(cfg, "app")
	if err != nil {
		t.Fatal(err)
	}
	next := Decide(history, Claim{Recorded: true})
	// Someone else upgrades in between.
	if _, err := action.NewUpgrade(cfg).Run("app", testChart(), map[string]any{}); err != nil {
		t.Fatal(err)
	}
	_, err = testClient(t).apply(context.Background(), cfg, testSpec(), next)
	var changed *ChangedError
	if !errors.As(err, &changed) || changed.Found.Version != 2 || changed.Expected.Version != 1 {
		t.Fatalf("apply after the history changed = %v, want a ChangedError (found 2, expected 1)", err)
	}
	if got := storedHistory(t, cfg); !slices.Equal(got, []string{"1:superseded", "2:deployed"}) {
		t.Errorf("the refused apply changed the history: %v", got)
	}
}

func TestSettleCancelled(t *testing.T) {
	tests := []struct {
		name    string
		history []rcommon.Status
		doing   string
		want    []string
	}{
		{name: "pending install", history: []rcommon.Status{rcommon.StatusPendingInstall}, doing: "installing", want: []string{"1:failed"}},
		{name: "pending upgrade", history: []rcommon.Status{rcommon.StatusDeployed, rcommon.StatusPendingUpgrade}, doing: "upgrading", want: []string{"1:deployed", "2:failed"}},
		// Helm settled it already: nothing to do.
		{name: "failed", history: []rcommon.Status{rcommon.StatusDeployed, rcommon.StatusFailed}, doing: "upgrading", want: []string{"1:deployed", "2:failed"}},
		{name: "none", doing: "installing", want: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := memoryConfiguration(t, nil, tt.history...)
			testClient(t).settleCancelled(cfg.Releases, testSpec(), tt.doing)
			if got := storedHistory(t, cfg); !slices.Equal(got, tt.want) {
				t.Errorf("history = %v, want %v", got, tt.want)
			}
			if len(tt.history) > 0 && tt.history[len(tt.history)-1].IsPending() {
				last, err := storedRevision(cfg, len(tt.history))
				if err != nil {
					t.Fatal(err)
				}
				if want := "Cancelled while " + tt.doing; last.Info.Description != want {
					t.Errorf("description = %q, want %q", last.Info.Description, want)
				}
			}
		})
	}
}

// blockingKube waits until released: a wait that never ends by itself, so only the
// cancellation ends the operation.
type blockingKube struct {
	kubefake.PrintingKubeClient
	released chan struct{}
}

func (k *blockingKube) GetWaiter(strategy helmkube.WaitStrategy) (helmkube.Waiter, error) {
	return k.GetWaiterWithOptions(strategy)
}

func (k *blockingKube) GetWaiterWithOptions(strategy helmkube.WaitStrategy, opts ...helmkube.WaitOption) (helmkube.Waiter, error) {
	waiter, err := k.PrintingKubeClient.GetWaiterWithOptions(strategy, opts...)
	return blockingWaiter{Waiter: waiter, released: k.released}, err
}

// blockingWaiter is the fake's waiter, but for the waits for the release's objects.
type blockingWaiter struct {
	helmkube.Waiter
	released chan struct{}
}

func (w blockingWaiter) Wait(helmkube.ResourceList, time.Duration) error {
	<-w.released
	return errors.New("released by the test")
}

func (w blockingWaiter) WaitWithJobs(resources helmkube.ResourceList, timeout time.Duration) error {
	return w.Wait(resources, timeout)
}

// A cancelled install or upgrade returns at once, says it was cancelled and leaves its
// revision failed, not pending, although Helm's own goroutine is still waiting. (Helm marks it
// failed itself; settleCancelled, tested above, is there for when it does not.)
func TestApply_cancelledOperationIsNotLeftPending(t *testing.T) {
	tests := []struct {
		name    string
		history []rcommon.Status
		want    []string
	}{
		{name: "install", want: []string{"1:failed"}},
		{name: "upgrade", history: []rcommon.Status{rcommon.StatusDeployed}, want: []string{"1:deployed", "2:failed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kube := &blockingKube{PrintingKubeClient: kubefake.PrintingKubeClient{Out: io.Discard}, released: make(chan struct{})}
			// Released after the assertions, so Helm's goroutine cannot settle the record itself.
			defer close(kube.released)
			cfg := memoryConfiguration(t, kube, tt.history...)
			history, err := readHistory(cfg, "app")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			spec := testSpec()
			spec.Wait = true
			go func() {
				// Cancel once Helm has recorded the pending revision and waits.
				for !slices.Contains(storedHistory(t, cfg), fmt.Sprintf("%d:pending-%s", len(tt.history)+1, tt.name)) {
					time.Sleep(10 * time.Millisecond)
				}
				cancel()
			}()
			_, err = testClient(t).apply(ctx, cfg, spec, Decide(history, Claim{Recorded: true}))
			var op *OperationError
			if !errors.As(err, &op) || !op.Cancelled || !errors.Is(err, context.Canceled) {
				t.Fatalf("apply cancelled during the wait = %v, want a cancelled OperationError", err)
			}
			if got := storedHistory(t, cfg); !slices.Equal(got, tt.want) {
				t.Errorf("history after the cancellation = %v, want %v", got, tt.want)
			}
		})
	}
}
