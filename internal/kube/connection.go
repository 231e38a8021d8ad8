// Package kube connects to a Kubernetes cluster and performs the provider's cluster I/O.
// It resolves the provider configuration into a client configuration the way kubectl does,
// connects lazily (the first resource that needs the cluster pays for it), and shares one
// set of clients per provider instance.
package kube

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Options is the provider configuration that decides how to reach the cluster.
// Precedence: an explicit Host; else ConfigPath; else the $KUBECONFIG list; else
// ~/.kube/config; else the in-cluster service account.
type Options struct {
	ConfigPath string
	// KubeconfigEnv is the value of $KUBECONFIG: a list of files merged the way kubectl merges them.
	KubeconfigEnv string
	Context       string

	Host                 string
	Token                string
	ClusterCACertificate string
	ClientCertificate    string
	ClientKey            string
	Insecure             bool
	Exec                 *ExecOptions

	// HomeDir locates ~/.kube/config; empty means the user's home directory.
	HomeDir string
	// InCluster returns the in-cluster configuration; nil means rest.InClusterConfig.
	InCluster func() (*rest.Config, error)
	// UserAgent identifies the provider in the API server's audit log.
	UserAgent string

	// RetryFor bounds how long a request that failed for a transient reason is retried when
	// its context has no sooner deadline; zero means DefaultRetryFor.
	RetryFor time.Duration
	// OnRetry, when set, hears of every repetition, for progress.
	OnRetry func(Retry)
	// CacheDir keeps what one provider process downloads for the next (the OpenAPI documents);
	// empty keeps nothing.
	CacheDir string
}

// ExecOptions runs a credential plugin, as a kubeconfig's users[].user.exec does.
type ExecOptions struct {
	APIVersion string
	Command    string
	Args       []string
	Env        map[string]string
}

// Source says where the client configuration came from, for diagnostics.
type Source struct {
	Host    string
	Context string
	// Origin is "explicit host", "config_path <file>", "KUBECONFIG <files>", "<file>" or "in-cluster".
	Origin string
}

func (s Source) String() string {
	if s.Context == "" {
		return fmt.Sprintf("host %s (%s)", s.Host, s.Origin)
	}
	return fmt.Sprintf("host %s, context %q (%s)", s.Host, s.Context, s.Origin)
}

// ErrNoConfiguration is returned when no way to reach a cluster was found.
var ErrNoConfiguration = errors.New("no Kubernetes configuration found")

// ErrContextNotFound is the Err of a *ContextError when the kubeconfig holds no context of
// that name.
var ErrContextNotFound = errors.New("context does not exist")

// ContextError is a kubeconfig context (config_context, else the kubeconfig's
// current-context) that no client configuration comes from: Err is ErrContextNotFound, with
// the contexts the kubeconfig holds in Available, or what client-go found wrong with the
// context's cluster or user.
type ContextError struct {
	Context   string
	Origin    string
	Available []string
	Err       error
}

func (e *ContextError) Error() string {
	if errors.Is(e.Err, ErrContextNotFound) {
		return fmt.Sprintf("context %q does not exist in kubeconfig %s; available contexts: %s", e.Context, e.Origin, quotedNames(e.Available))
	}
	return fmt.Sprintf("kubeconfig %s, context %q: %v", e.Origin, e.Context, e.Err)
}

func (e *ContextError) Unwrap() error { return e.Err }

// Resolve turns Options into a client configuration without contacting the cluster.
func Resolve(opts Options) (*rest.Config, Source, error) {
	if opts.Host != "" {
		return resolveExplicit(opts)
	}
	if opts.ConfigPath != "" {
		path := expandHome(opts.ConfigPath, opts.HomeDir)
		if _, err := os.Stat(path); err != nil {
			return nil, Source{}, fmt.Errorf("kubeconfig file %s (config_path) cannot be read: %w", path, err)
		}
		return resolveKubeconfig(&clientcmd.ClientConfigLoadingRules{ExplicitPath: path}, opts, "config_path "+path)
	}
	if opts.KubeconfigEnv != "" {
		files := filepath.SplitList(opts.KubeconfigEnv)
		existing := make([]string, 0, len(files))
		for _, f := range files {
			if f == "" {
				continue
			}
			f = expandHome(f, opts.HomeDir)
			if _, err := os.Stat(f); err == nil {
				existing = append(existing, f)
			}
		}
		if len(existing) == 0 {
			return nil, Source{}, fmt.Errorf("none of the kubeconfig files in $KUBECONFIG exists (%s): %w", opts.KubeconfigEnv, ErrNoConfiguration)
		}
		return resolveKubeconfig(&clientcmd.ClientConfigLoadingRules{Precedence: existing}, opts, "KUBECONFIG "+strings.Join(existing, string(filepath.ListSeparator)))
	}
	home := filepath.Join(homeDir(opts.HomeDir), ".kube", "config")
	if _, err := os.Stat(home); err == nil {
		return resolveKubeconfig(&clientcmd.ClientConfigLoadingRules{ExplicitPath: home}, opts, home)
	}
	inCluster := opts.InCluster
	if inCluster == nil {
		inCluster = rest.InClusterConfig
	}
	if cfg, err := inCluster(); err == nil {
		cfg.UserAgent = opts.UserAgent
		return cfg, Source{Host: cfg.Host, Origin: "in-cluster"}, nil
	}
	return nil, Source{}, fmt.Errorf("%w: config_path and host are unset, $KUBECONFIG is empty, %s does not exist and this is not a pod in a cluster", ErrNoConfiguration, home)
}

func resolveExplicit(opts Options) (*rest.Config, Source, error) {
	cfg := &rest.Config{
		Host:        opts.Host,
		BearerToken: opts.Token,
		UserAgent:   opts.UserAgent,
		TLSClientConfig: rest.TLSClientConfig{
			Insecure: opts.Insecure,
			CAData:   []byte(opts.ClusterCACertificate),
			CertData: []byte(opts.ClientCertificate),
			KeyData:  []byte(opts.ClientKey),
		},
	}
	if opts.Exec != nil {
		cfg.ExecProvider = execConfig(opts.Exec)
	}
	if opts.Insecure {
		cfg.CAData = nil
	}
	if _, err := rest.TransportFor(cfg); err != nil {
		return nil, Source{}, fmt.Errorf("invalid explicit configuration for host %s: %w", opts.Host, err)
	}
	return cfg, Source{Host: opts.Host, Origin: "explicit host"}, nil
}

func resolveKubeconfig(rules *clientcmd.ClientConfigLoadingRules, opts Options, origin string) (*rest.Config, Source, error) {
	overrides := &clientcmd.ConfigOverrides{CurrentContext: opts.Context}
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	raw, err := loader.RawConfig()
	if err != nil {
		return nil, Source{}, fmt.Errorf("read kubeconfig %s: %w", origin, err)
	}
	contextName := opts.Context
	if contextName == "" {
		contextName = raw.CurrentContext
	}
	if contextName == "" {
		return nil, Source{}, fmt.Errorf("kubeconfig %s has no current-context and config_context is unset; available contexts: %s", origin, quotedNames(contextNames(raw)))
	}
	if _, ok := raw.Contexts[contextName]; !ok {
		return nil, Source{}, &ContextError{Context: contextName, Origin: origin, Available: contextNames(raw), Err: ErrContextNotFound}
	}
	cfg, err := loader.ClientConfig()
	if err != nil {
		return nil, Source{}, &ContextError{Context: contextName, Origin: origin, Err: err}
	}
	cfg.UserAgent = opts.UserAgent
	return cfg, Source{Host: cfg.Host, Context: contextName, Origin: origin}, nil
}

// contextNames are the names of raw's contexts, sorted.
func contextNames(raw clientcmdapi.Config) []string {
	names := make([]string, 0, len(raw.Contexts))
	for n := range raw.Contexts {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// quotedNames lists names quoted, or says "(none)".
func quotedNames(names []string) string {
	if len(names) == 0 {
		return "(none)"
	}
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(quoted, ", ")
}

func execConfig(e *ExecOptions) *clientcmdapi.ExecConfig {
	cfg := &clientcmdapi.ExecConfig{
		APIVersion:      e.APIVersion,
		Command:         e.Command,
		Args:            e.Args,
		InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
	}
	keys := make([]string, 0, len(e.Env))
	for k := range e.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		cfg.Env = append(cfg.Env, clientcmdapi.ExecEnvVar{Name: k, Value: e.Env[k]})
	}
	return cfg
}

func homeDir(override string) string {
	if override != "" {
		return override
	}
	if h, err := os.UserHomeDir(); err == nil {
		return h
	}
	return ""
}

func expandHome(path, home string) string {
	if path == "~" || strings.HasPrefix(path, "~/") {
		return filepath.Join(homeDir(home), strings.TrimPrefix(path, "~"))
	}
	return path
}

// Clients is the shared set of clients of one provider instance.
type Clients struct {
	Config     *rest.Config
	Source     Source
	Kubernetes kubernetes.Interface
	Dynamic    dynamic.Interface
	// Lists reads a kind's objects with one LIST, on the dynamic client's connections.
	Lists *Lister
	// Metadata reads only objects' metadata: enough to tell whether they exist.
	Metadata  metadata.Interface
	Discovery discovery.CachedDiscoveryInterface
	Mapper    meta.ResettableRESTMapper
	// ServerVersion is the API server's gitVersion, e.g. v1.37.2.
	ServerVersion string
	// documents keeps this server's OpenAPI documents between processes.
	documents documentCache
}

// The client-side rate limit of one provider process, shared by every resource Terraform runs
// in parallel (10 by default) and by Helm's actions. client-go's defaults (5 QPS, burst 10) would
// serialize a plan's reads and dry runs; the API server's own fairness (API Priority and
// Fairness) is what protects it from twenty processes at once: it answers 429 with Retry-After,
// which client-go's REST client honours, waiting as told and retrying up to 10 times, for reads
// and writes alike (a 429 was not processed). No transport of ours sits in front of it.
const (
	ClientQPS   = 50
	ClientBurst = 100
)

// Connection connects on first use and then hands out the same Clients.
type Connection struct {
	opts        Options
	resolveErr  error
	mu          sync.Mutex
	attempt     *attempt
	probeTimout time.Duration
}

// attempt is one connection to the API server: its clients, which can send requests at once,
// and the probe's answer, err (set before done is closed).
type attempt struct {
	clients *Clients
	done    chan struct{}
	err     error
}

// wait returns the probe's answer once it has come, or ctx's error.
func (a *attempt) wait(ctx context.Context) error {
	select {
	case <-a.done:
		return a.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// NewConnection returns a Connection that has not contacted the cluster yet.
func NewConnection(opts Options) *Connection {
	return &Connection{opts: opts, probeTimout: 15 * time.Second}
}

// NewUnavailableConnection returns a Connection that fails with err on use, for a provider
// whose configuration is unknown or invalid: resources that can work offline still do.
func NewUnavailableConnection(err error) *Connection {
	return &Connection{resolveErr: err}
}

// Describe names the target without connecting, for diagnostics.
func (c *Connection) Describe() string {
	if c.resolveErr != nil {
		return c.resolveErr.Error()
	}
	_, src, err := Resolve(c.opts)
	if err != nil {
		return err.Error()
	}
	return src.String()
}

// Clients connects when called first and checks that the API server answers.
// A failure is not cached, so a cluster that comes up later is found by the next call.
func (c *Connection) Clients(ctx context.Context) (*Clients, error) {
	a, err := c.start(ctx)
	if err != nil {
		return nil, err
	}
	if err := a.wait(ctx); err != nil {
		return nil, err
	}
	return a.clients, nil
}

// Early returns the clients Clients returns without waiting for the probe's answer, so that
// requests whose answers are needed anyway go out while it is under way: through the GitLab
// agent's tunnel the probe is a round trip. Until wait returns nil, the clients' requests may
// fail for want of a server, and ServerVersion and the OpenAPI documents are not set; wait
// returns what Clients would return as an error (an UnreachableError when the server did not
// answer), which is the one to report.
func (c *Connection) Early(ctx context.Context) (clients *Clients, wait func(context.Context) error, err error) {
	a, err := c.start(ctx)
	if err != nil {
		return nil, nil, err
	}
	return a.clients, a.wait, nil
}

// start returns the connection's attempt, begun when there is none: the clients built and
// discovery and the probe under way.
func (c *Connection) start(ctx context.Context) (*attempt, error) {
	if c.resolveErr != nil {
		return nil, c.resolveErr
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.attempt != nil {
		return c.attempt, nil
	}
	cfg, src, err := Resolve(c.opts)
	if err != nil {
		return nil, err
	}
	cfg.QPS = ClientQPS
	cfg.Burst = ClientBurst
	// Innermost, under the retries: one handshake for the first requests sent together.
	newFirstConnection().wrap(cfg)
	retrying(cfg, c.opts)
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("create Kubernetes client for %s: %w", src, err)
	}
	dc, lister, err := newDynamic(cfg)
	if err != nil {
		return nil, fmt.Errorf("create dynamic client for %s: %w", src, err)
	}
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("create metadata client for %s: %w", src, err)
	}
	cached := memory.NewMemCacheClient(aggregatedDiscovery{kc.DiscoveryClient})
	// Discovery (/api and /apis at once) is read while the probe waits for /version: through the
	// GitLab agent's tunnel each request is a round trip. The built-in kinds that need no
	// discovery (builtinResources) are read and written meanwhile; a kind that does waits for
	// it. A failed read is not kept: the mapper's first use reads again.
	go prefetchDiscovery(cached, c.probeTimout)
	a := &attempt{done: make(chan struct{}), clients: &Clients{
		Config:     cfg,
		Source:     src,
		Kubernetes: kc,
		Dynamic:    dc,
		Lists:      lister,
		Metadata:   mc,
		Discovery:  cached,
		Mapper:     builtinFirstMapper{restmapper.NewDeferredDiscoveryRESTMapper(cached)},
	}}
	c.attempt = a
	// The probe is the connection's, not the caller's: it ends within its own timeout even
	// when the caller that began it is gone, and every caller waits for the same answer.
	probeCtx := context.WithoutCancel(ctx)
	go func() {
		defer close(a.done)
		version, err := probe(probeCtx, kc, c.probeTimout)
		if err != nil {
			a.err = &UnreachableError{Source: src, Err: err}
			c.mu.Lock()
			if c.attempt == a {
				c.attempt = nil // not kept: the next call connects again
			}
			c.mu.Unlock()
			return
		}
		a.clients.ServerVersion = version
		a.clients.documents = newDocumentCache(c.opts.CacheDir, identityOf(cfg, version))
	}()
	return a, nil
}

// identityOf tells the API server cfg reaches from others for the document cache.
func identityOf(cfg *rest.Config, version string) serverIdentity {
	ca := cfg.CAData
	if len(ca) == 0 && cfg.CAFile != "" {
		if b, err := os.ReadFile(cfg.CAFile); err == nil {
			ca = b
		} else {
			ca = []byte(cfg.CAFile)
		}
	}
	return serverIdentity{Host: cfg.Host, TLSServerName: cfg.ServerName, CA: ca, Version: version}
}

// prefetchDiscovery fills cached's groups and resources; callers of cached meanwhile wait for it.
func prefetchDiscovery(cached discovery.CachedDiscoveryInterface, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if aggregated, ok := cached.(discovery.AggregatedDiscoveryInterfaceWithContext); ok {
		_, _, _, _ = aggregated.GroupsAndMaybeResourcesWithContext(ctx)
	}
}

func probe(ctx context.Context, kc kubernetes.Interface, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(withoutRetries(ctx), timeout)
	defer cancel()
	body, err := kc.Discovery().RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return "", err
	}
	v, err := parseVersion(body)
	if err != nil {
		return "", fmt.Errorf("read server version: %w", err)
	}
	return v, nil
}

// UnreachableError reports a cluster that did not answer.
type UnreachableError struct {
	Source Source
	Err    error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("the Kubernetes API server at %s did not answer: %v", e.Source, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }
