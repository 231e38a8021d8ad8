package helmrelease

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chartutil"
	helmkube "helm.sh/helm/v3/pkg/kube"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/kube"
)

// FieldManager is the name the API server records as the manager of the fields Helm writes
// for this provider (Helm would otherwise use the name of the running binary).
const FieldManager = "gitlabk8s-helm"

func init() {
	helmkube.ManagedFieldsManager = FieldManager
}

// Options tune a Client.
type Options struct {
	// Log receives Helm's and the client's debug messages. Messages may quote object names
	// and API errors, never values; callers still pass them through their redactor.
	Log func(msg string)
	// Progress receives the progress of every wait.
	Progress ProgressFunc
	// PollInterval is the time between two readiness checks; one second when zero.
	PollInterval time.Duration
	// BlockedTimeout, when positive, fails a wait as soon as an object has been blocked that
	// long for a reason that might still clear by itself (see BlockedError); otherwise such
	// objects are waited for until the timeout, their reason in the progress and the error.
	BlockedTimeout time.Duration
}

// Client runs Helm actions with the provider's shared clients.
type Client struct {
	clients *kube.Clients
	opts    Options
	reader  liveReader
	// deletions reads only metadata, for deletion waits.
	deletions objectGetter
}

// New returns a Client that uses clients for everything, Helm included.
func New(clients *kube.Clients, opts Options) *Client {
	c := &Client{clients: clients, opts: opts, reader: dynamicReader{client: clients.Dynamic}}
	if clients.Metadata != nil {
		c.deletions = metadataReader{client: clients.Metadata}
	}
	return c
}

func (c *Client) logf(format string, args ...any) {
	if c.opts.Log != nil {
		c.opts.Log(fmt.Sprintf(format, args...))
	}
}

// configuration builds Helm's action configuration for one operation in namespace. Its
// waits and hooks stop when ctx is cancelled. caps, when not nil, replaces what Helm would
// discover, so the apply renders with exactly the capabilities the plan used.
func (c *Client) configuration(ctx context.Context, namespace string, caps *chartutil.Capabilities) *action.Configuration {
	getter := &clientsGetter{clients: c.clients, namespace: namespace}
	kc := helmkube.New(getter)
	kc.Namespace = namespace
	kc.Log = c.logf
	secrets := driver.NewSecrets(c.clients.Kubernetes.CoreV1().Secrets(namespace))
	secrets.Log = c.logf
	store := storage.Init(secrets)
	store.Log = c.logf
	return &action.Configuration{
		RESTClientGetter: getter,
		KubeClient: &contextKubeClient{Client: kc, ctx: ctx, waiter: &waiter{
			reader:    c.reader,
			deletions: c.deletions,
			namespace: namespace,
			interval:  c.opts.PollInterval,
			progress:  c.opts.Progress,
			logf:      c.logf,
			// Events from before this operation are an earlier one's.
			since:          time.Now(),
			blockedTimeout: c.opts.BlockedTimeout,
		}},
		Releases:       store,
		Capabilities:   caps,
		Log:            c.logf,
		HookOutputFunc: func(_, _, _ string) io.Writer { return io.Discard },
	}
}

// lastRelease returns the newest revision of the release, or nil when there is none.
func lastRelease(releases *storage.Storage, name string) (*release.Release, error) {
	history, err := releases.History(name)
	if errors.Is(err, driver.ErrReleaseNotFound) || (err == nil && len(history) == 0) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read history of release %s: %w", name, err)
	}
	last := history[0]
	for _, r := range history[1:] {
		if r.Version > last.Version {
			last = r
		}
	}
	return last, nil
}

// readHistory returns the stored revisions of the release, none when it does not exist.
func readHistory(cfg *action.Configuration, name string) ([]Revision, error) {
	history, err := cfg.Releases.History(name)
	if err != nil && !errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, fmt.Errorf("read history of release %s: %w", name, err)
	}
	return revisionsOf(history), nil
}

// lastSuccessful returns the newest deployed or superseded version older than before, or 0.
func lastSuccessful(cfg *action.Configuration, name string, before int) (int, error) {
	history, err := readHistory(cfg, name)
	if err != nil {
		return 0, err
	}
	return newestSuccessful(history, before), nil
}

// Get returns the newest revision of the release, or ErrNotFound. A release whose newest
// revision is uninstalled (kept history) counts as not found.
func (c *Client) Get(ctx context.Context, namespace, name string) (*release.Release, error) {
	cfg := c.configuration(ctx, namespace, nil)
	last, err := lastRelease(cfg.Releases, name)
	if err != nil {
		return nil, err
	}
	if last == nil || last.Info == nil || last.Info.Status == release.StatusUninstalled {
		return nil, fmt.Errorf("release %s in namespace %s: %w", name, namespace, ErrNotFound)
	}
	return last, nil
}

// History returns every stored revision of the release, oldest first.
func (c *Client) History(ctx context.Context, namespace, name string) ([]*release.Release, error) {
	cfg := c.configuration(ctx, namespace, nil)
	history, err := action.NewHistory(cfg).Run(name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read history of release %s: %w", name, err)
	}
	slices.SortFunc(history, func(a, b *release.Release) int { return a.Version - b.Version })
	return history, nil
}

// ErrNotFound is returned for a release that does not exist.
var ErrNotFound = errors.New("release not found")

// ServerCapabilities returns the cluster's version and the API versions it serves, the
// way Helm discovers them for .Capabilities.
func (c *Client) ServerCapabilities() (kubeVersion string, apiVersions []string, err error) {
	versions, err := action.GetVersionSet(c.clients.Discovery)
	if err != nil {
		return "", nil, fmt.Errorf("discover the API versions of %s: %w", c.clients.Source, err)
	}
	return c.clients.ServerVersion, versions, nil
}
