// Package testcluster gives tests the project's local Kubernetes cluster: a real API server,
// controller manager and scheduler, with kwok playing the kubelets of three fake nodes. The cluster
// is the one scripts/cluster-up.sh starts; Ensure starts it when it is not answering and
// otherwise reuses it, so every test package and every developer shares one.
//
// A cluster started by Ensure is left running; `make cluster-down` stops it.
package testcluster

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Context names in the cluster's kubeconfig.
const (
	// AdminContext authenticates as the cluster administrator (group system:masters).
	AdminContext = "admin"
	// CIJobContext is a GitLab CI job of project 1 as the GitLab agent impersonates it
	// ([CIJobContextJob]): it may create, update and fill namespaces but not delete them.
	CIJobContext = "ci-job"
	// AgentUser is the identity the ci-job context authenticates as, the stand-in of the GitLab
	// agent's ServiceAccount: it may only impersonate.
	AgentUser = "system:serviceaccount:gitlab-agent:gitlab-agent"
)

// CIJobContextJob is the job the ci-job context impersonates, as scripts/cluster-up.sh writes it.
var CIJobContextJob = CIJob{ID: "1", ProjectID: "1", GroupIDs: []string{"1"}, EnvironmentSlug: "ci", Tier: "development"}

// Cluster describes a running local cluster, as scripts/cluster-up.sh wrote it down.
type Cluster struct {
	// Dir is the cluster's state folder (certificates, etcd data, logs).
	Dir string
	// Kubeconfig is the path of a kubeconfig with the contexts AdminContext (current) and
	// CIJobContext. It embeds the CA, so TLS is verified.
	Kubeconfig string
	// Host is the API server's URL, https://127.0.0.1:<port>.
	Host string
	// CAFile is the path of the PEM certificate of the CA that signed the API server's certificate.
	CAFile string
	// AdminContext and CIJobContext name the kubeconfig's two contexts.
	AdminContext string
	CIJobContext string
	// AdminToken is the bearer token of the administrator; AgentToken the one of the GitLab
	// agent's stand-in ([AgentUser]), which the ci-job context impersonates with.
	AdminToken string
	AgentToken string
	// KubectlPath is the path of a kubectl binary matching the API server's version.
	KubectlPath string
}

// Variables of the env file cluster-up.sh writes into the state folder.
const (
	envClusterDir = "GITLABK8S_CLUSTER_DIR"
	envKubeconfig = "KUBECONFIG"
	envHost       = "GITLABK8S_KUBE_HOST"
	envCAFile     = "GITLABK8S_KUBE_CA_FILE"
	envAdminToken = "GITLABK8S_ADMIN_TOKEN"
	envAgentToken = "GITLABK8S_AGENT_TOKEN"
	envKubectl    = "GITLABK8S_KUBECTL"
)

// Ensure returns the local cluster, starting it with scripts/cluster-up.sh when its API server
// does not answer. The first start may build the control plane from source and take minutes;
// later calls take milliseconds. A lock on <state folder>/.lock, the one the scripts take too,
// keeps parallel test packages from starting two clusters.
//
// The state folder is $GITLABK8S_CLUSTER_DIR (relative paths are taken from the repository
// root) or <repository root>/.cluster; the repository root is the nearest folder above the
// working directory holding go.mod.
func Ensure(ctx context.Context) (*Cluster, error) {
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	dir := stateDir(root, os.Getenv(envClusterDir))

	unlock, err := lockFile(ctx, filepath.Join(dir, ".lock"))
	if err != nil {
		return nil, fmt.Errorf("lock local cluster %s: %w", dir, err)
	}
	defer unlock()

	if c, err := load(dir); err == nil && c.ready(ctx) == nil {
		return c, nil
	}
	if err := runScript(ctx, root, dir, "cluster-up.sh", nil); err != nil {
		return nil, err
	}
	c, err := load(dir)
	if err != nil {
		return nil, fmt.Errorf("read local cluster started by scripts/cluster-up.sh: %w", err)
	}
	if err := c.ready(ctx); err != nil {
		return nil, fmt.Errorf("local cluster started by scripts/cluster-up.sh is not ready: %w", err)
	}
	return c, nil
}

// repoRoot walks up from the working directory to the folder holding go.mod.
func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find repository root: %w", err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if _, err := os.Stat(filepath.Join(dir, "scripts", "cluster-up.sh")); err != nil {
				return "", fmt.Errorf("find repository root: %s holds go.mod but no scripts/cluster-up.sh", dir)
			}
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("find repository root: no go.mod in %s or above", wd)
		}
	}
}

// stateDir resolves the state folder the way scripts/cluster/common.sh does.
func stateDir(root, configured string) string {
	switch {
	case configured == "":
		return filepath.Join(root, ".cluster")
	case filepath.IsAbs(configured):
		return filepath.Clean(configured)
	default:
		return filepath.Join(root, configured)
	}
}

// clusterUpOutputTail bounds how much of cluster-up's output an error repeats; the script
// already ends a failure with the tail of the failing component's log.
const clusterUpOutputTail = 4 << 10

// runScript runs scripts/<script> (cluster-up.sh or cluster-down.sh) for the cluster in dir,
// with env added to the environment; the caller holds the state folder's lock.
func runScript(ctx context.Context, root, dir, script string, env []string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(root, "scripts", script))
	cmd.Dir = root
	// We hold the state folder's lock; the script must not wait for it.
	cmd.Env = append(append(os.Environ(), env...), envClusterDir+"="+dir, "GITLABK8S_CLUSTER_LOCKED=1")
	// Progress goes to stderr (shown by go test -v or on failure) and, for the error, to a buffer.
	tail := &tailBuffer{max: clusterUpOutputTail}
	cmd.Stdout = io.MultiWriter(os.Stderr, tail)
	cmd.Stderr = cmd.Stdout
	// The cluster's processes never hold our pipes, but should one ever do, Wait must not hang.
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("local cluster %s: scripts/%s (logs in %s): %w\n%s",
			dir, script, filepath.Join(dir, "logs"), err, tail.String())
	}
	return nil
}

// load reads the env file cluster-up.sh wrote into dir.
func load(dir string) (*Cluster, error) {
	f, err := os.Open(filepath.Join(dir, "env"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	vars, err := parseEnvFile(f)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", f.Name(), err)
	}
	c := &Cluster{
		Dir:          vars[envClusterDir],
		Kubeconfig:   vars[envKubeconfig],
		Host:         vars[envHost],
		CAFile:       vars[envCAFile],
		AdminContext: AdminContext,
		CIJobContext: CIJobContext,
		AdminToken:   vars[envAdminToken],
		AgentToken:   vars[envAgentToken],
		KubectlPath:  vars[envKubectl],
	}
	var missing []string
	for name, value := range map[string]string{
		envClusterDir: c.Dir, envKubeconfig: c.Kubeconfig, envHost: c.Host, envCAFile: c.CAFile,
		envAdminToken: c.AdminToken, envAgentToken: c.AgentToken, envKubectl: c.KubectlPath,
	} {
		if value == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s lacks %s", f.Name(), strings.Join(missing, ", "))
	}
	return c, nil
}

// parseEnvFile reads the lines `export NAME='value'` of a file cluster-up.sh wrote. Values never
// contain a single quote (the script refuses such paths), so no shell unquoting is needed.
func parseEnvFile(r io.Reader) (map[string]string, error) {
	vars := map[string]string{}
	scanner := bufio.NewScanner(r)
	for line := 1; scanner.Scan(); line++ {
		text := strings.TrimSpace(scanner.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		name, value, ok := strings.Cut(strings.TrimPrefix(text, "export "), "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("line %d: want NAME=value, got %q", line, text)
		}
		if len(value) >= 2 && value[0] == '\'' && value[len(value)-1] == '\'' {
			value = value[1 : len(value)-1]
		}
		vars[name] = value
	}
	return vars, scanner.Err()
}

// ready asks the API server's /readyz endpoint, as admin and with TLS verified.
func (c *Cluster) ready(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	clientset, err := c.Clientset(AdminContext)
	if err != nil {
		return err
	}
	body, err := clientset.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("GET %s/readyz: %w", c.Host, err)
	}
	if got := string(bytes.TrimSpace(body)); got != "ok" {
		return errors.New("GET " + c.Host + "/readyz: " + got)
	}
	return nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.buf) }
