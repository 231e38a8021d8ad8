package helmrelease

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	helmkube "helm.sh/helm/v4/pkg/kube"
	ri "helm.sh/helm/v4/pkg/release"
	release "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"
	"helm.sh/helm/v4/pkg/storage/driver"

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
	// logs reads the ends of failed hooks' pods' logs.
	logs logTailer
}

// New returns a Client that uses clients for everything, Helm included.
func New(clients *kube.Clients, opts Options) *Client {
	c := &Client{clients: clients, opts: opts, reader: dynamicReader{client: clients.Dynamic, lists: clients.Lists}}
	if clients.Kubernetes != nil {
		c.logs = podLogs{client: clients.Kubernetes}
	}
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
// discover, so the apply renders with exactly the capabilities the plan used. Every part of
// Helm that logs is given the client's log; none is left with slog's default.
func (c *Client) configuration(ctx context.Context, namespace string, caps *common.Capabilities) *action.Configuration {
	logs := c.helmLog()
	getter := &clientsGetter{clients: c.clients, namespace: namespace}
	kc := helmkube.New(getter)
	kc.Factory = serverValidatedFactory{Factory: kc.Factory, servesFieldValidation: c.clients.ServesFieldValidation}
	kc.Namespace = namespace
	kc.SetLogger(logs)
	secrets := driver.NewSecrets(c.clients.Kubernetes.CoreV1().Secrets(namespace))
	secrets.SetLogger(logs)
	store := storage.Init(secrets)
	store.SetLogger(logs)
	cfg := &action.Configuration{
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
			logs:           c.logs,
		}},
		Releases:       store,
		Capabilities:   caps,
		HookOutputFunc: func(_, _, _ string) io.Writer { return io.Discard },
	}
	cfg.SetLogger(logs)
	return cfg
}

// asRelease returns the release a Helm 4 action or its storage returned, which it types as
// any release format; nil for none.
func asRelease(r ri.Releaser) (*release.Release, error) {
	switch rel := r.(type) {
	case nil:
		return nil, nil
	case *release.Release:
		return rel, nil
	default:
		return nil, fmt.Errorf("release record of an unsupported format (%T)", r)
	}
}

// asReleases is asRelease for each of rs.
func asReleases(rs []ri.Releaser) ([]*release.Release, error) {
	out := make([]*release.Release, 0, len(rs))
	for _, r := range rs {
		rel, err := asRelease(r)
		if err != nil {
			return nil, err
		}
		if rel != nil {
			out = append(out, rel)
		}
	}
	return out, nil
}

// releaseHistory returns the stored revisions of the release, in the storage's order.
func releaseHistory(releases *storage.Storage, name string) ([]*release.Release, error) {
	history, err := releases.History(name)
	if err != nil {
		return nil, err
	}
	return asReleases(history)
}

// lastRelease returns the newest revision of the release, or nil when there is none.
func lastRelease(releases *storage.Storage, name string) (*release.Release, error) {
	history, err := releaseHistory(releases, name)
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
	history, err := releaseHistory(cfg.Releases, name)
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
