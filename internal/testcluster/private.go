package testcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Private is a cluster of a test's own, for tests that stop or restart its API server, which
// would break every other test on the shared cluster. It is started by scripts/cluster-up.sh
// in its own state folder and on its own ports, and stopped, its folder wiped, by Stop.
type Private struct {
	*Cluster
	root string
	env  []string
}

// PrivateOptions place a private cluster. Zero ports are chosen free below the range the
// kernel hands out to outgoing connections, so that none takes the API server's port while
// it restarts.
type PrivateOptions struct {
	// Dir is the state folder; it must be empty or hold a stopped cluster of ours.
	Dir string
	// APIServerPort and EtcdPort (and EtcdPort+1, etcd's peer port) are the ports it listens on.
	APIServerPort, EtcdPort int
}

// First ports tried when none is given: above the shared cluster's defaults (16443, 12379).
const (
	firstPrivateAPIServerPort = 17443
	firstPrivateEtcdPort      = 13379
	privatePortTries          = 200
)

// StartPrivate starts a private cluster as opts say and waits until it is ready. The first
// start in a folder builds its local-cloud binary and takes up to a minute or two.
func StartPrivate(ctx context.Context, opts PrivateOptions) (*Private, error) {
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	if opts.Dir == "" {
		return nil, errors.New("private cluster: no state folder given")
	}
	if opts.APIServerPort == 0 {
		if opts.APIServerPort, err = freePorts(firstPrivateAPIServerPort, 1); err != nil {
			return nil, err
		}
	}
	if opts.EtcdPort == 0 {
		if opts.EtcdPort, err = freePorts(firstPrivateEtcdPort, 2); err != nil {
			return nil, err
		}
	}
	p := &Private{root: root, env: []string{
		"GITLABK8S_APISERVER_PORT=" + strconv.Itoa(opts.APIServerPort),
		"GITLABK8S_ETCD_PORT=" + strconv.Itoa(opts.EtcdPort),
		// A fault proxy asked for the shared cluster would take its port here too.
		"GITLABK8S_FAULT_PROXY_PORT=",
	}}
	dir := stateDir(root, opts.Dir)
	if err := p.run(ctx, dir, "cluster-up.sh"); err != nil {
		// What did start must not outlive the test.
		return nil, errors.Join(err, p.run(context.WithoutCancel(ctx), dir, "cluster-down.sh"))
	}
	if p.Cluster, err = load(dir); err != nil {
		err = fmt.Errorf("read private cluster started by scripts/cluster-up.sh: %w", err)
	} else if err = p.ready(ctx); err != nil {
		err = fmt.Errorf("private cluster started by scripts/cluster-up.sh is not ready: %w", err)
	}
	if err != nil {
		return nil, errors.Join(err, p.run(context.WithoutCancel(ctx), dir, "cluster-down.sh"))
	}
	return p, nil
}

// Stop stops every process of the cluster and wipes its state folder (scripts/cluster-down.sh).
func (p *Private) Stop(ctx context.Context) error {
	// A frozen API server would not hear SIGTERM until cluster-down gives up on it.
	if pid, err := p.apiServerPID(); err == nil {
		_ = syscall.Kill(pid, syscall.SIGCONT)
	}
	return p.run(ctx, p.Dir, "cluster-down.sh")
}

// FreezeAPIServer stops the API server's process (SIGSTOP): connections stay open and nothing
// answers, as when a machine stalls. The returned function resumes it (SIGCONT).
func (p *Private) FreezeAPIServer() (resume func() error, err error) {
	pid, err := p.apiServerPID()
	if err != nil {
		return nil, err
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return nil, fmt.Errorf("stop kube-apiserver (pid %d): %w", pid, err)
	}
	return func() error {
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
			return fmt.Errorf("resume kube-apiserver (pid %d): %w", pid, err)
		}
		return nil
	}, nil
}

// apiServerStopTimeout bounds the API server's shutdown before it is killed.
const apiServerStopTimeout = 30 * time.Second

// RestartAPIServer stops the API server as a cluster upgrade does (SIGTERM, SIGKILL after
// apiServerStopTimeout), then starts it again with scripts/cluster-up.sh, which starts what is
// not running and waits until the API server is ready.
func (p *Private) RestartAPIServer(ctx context.Context) error {
	pid, err := p.apiServerPID()
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return fmt.Errorf("stop kube-apiserver (pid %d): %w", pid, err)
	}
	if !exited(ctx, pid, apiServerStopTimeout) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		if !exited(ctx, pid, 5*time.Second) {
			return fmt.Errorf("kube-apiserver (pid %d) did not exit", pid)
		}
	}
	return p.run(ctx, p.Dir, "cluster-up.sh")
}

func (p *Private) run(ctx context.Context, dir, script string) error {
	unlock, err := lockFile(ctx, filepath.Join(dir, ".lock"))
	if err != nil {
		return fmt.Errorf("lock private cluster %s: %w", dir, err)
	}
	defer unlock()
	return runScript(ctx, p.root, dir, script, p.env)
}

// apiServerPID is the pid cluster-up recorded for the API server, checked against the
// process's command line, which names the state folder: a recycled pid is never signalled.
func (p *Private) apiServerPID() (int, error) {
	file := filepath.Join(p.Dir, "pids", "kube-apiserver.pid")
	data, err := os.ReadFile(file)
	if err != nil {
		return 0, fmt.Errorf("kube-apiserver of %s: %w", p.Dir, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return 0, fmt.Errorf("kube-apiserver of %s: %s: %w", p.Dir, file, err)
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !strings.Contains(string(cmdline), p.Dir+"/") {
		return 0, fmt.Errorf("kube-apiserver of %s: pid %d is not running", p.Dir, pid)
	}
	return pid, nil
}

// exited waits up to timeout for the process pid to be gone (or a zombie nobody reaps).
func exited(ctx context.Context, pid int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || zombie(string(stat)) {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// zombie says whether a /proc/<pid>/stat line is of a process that has exited: its state,
// the field after the command's closing parenthesis, is Z or X.
func zombie(stat string) bool {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return false
	}
	return stat[i+2] == 'Z' || stat[i+2] == 'X'
}

// freePorts returns the first port from first on, stepping by n, where n ports in a row are
// free on loopback.
func freePorts(first, n int) (int, error) {
	for port := first; port < first+privatePortTries*n; port += n {
		if portsFree(port, n) {
			return port, nil
		}
	}
	return 0, fmt.Errorf("no %d free ports in a row on 127.0.0.1 from %d on", n, first)
}

func portsFree(port, n int) bool {
	for i := range n {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port+i)))
		if err != nil {
			return false
		}
		_ = l.Close()
	}
	return true
}
