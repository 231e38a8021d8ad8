package provider

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// These helpers run the real terraform CLI against a provider binary built from this
// repository, for what terraform-plugin-testing cannot show: the human-readable plan, the
// provider's own log file, and a terraform process killed in the middle of an apply.

// originalHome is $HOME before testAccCluster points it at a temporary folder: the go command
// finds its module and build caches there.
var originalHome = os.Getenv("HOME")

var (
	providerBinaryOnce sync.Once
	providerBinaryDir  string
	providerBinaryErr  error
)

// buildProviderBinary builds the provider once per test run.
func buildProviderBinary(t *testing.T) string {
	t.Helper()
	providerBinaryOnce.Do(func() {
		dir, err := os.MkdirTemp("", "gitlabk8s-provider-")
		if err != nil {
			providerBinaryErr = err
			return
		}
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Join(filepath.Dir(file), "..", "..")
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "terraform-provider-gitlabk8s"), ".")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "HOME="+originalHome)
		if out, err := cmd.CombinedOutput(); err != nil {
			providerBinaryErr = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		providerBinaryDir = dir
	})
	if providerBinaryErr != nil {
		t.Fatalf("build the provider: %v", providerBinaryErr)
	}
	return providerBinaryDir
}

// terraformCLI runs terraform in a working directory of its own with the built provider
// installed through dev_overrides.
type terraformCLI struct {
	t       *testing.T
	dir     string
	logPath string
	env     []string
}

func newTerraformCLI(t *testing.T) *terraformCLI {
	t.Helper()
	bin := buildProviderBinary(t)
	dir := t.TempDir()
	rc := filepath.Join(dir, "terraformrc")
	if err := os.WriteFile(rc, []byte(fmt.Sprintf(`provider_installation {
  dev_overrides {
    %q = %q
  }
  direct {}
}
`, RegistryAddress, bin)), 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "provider.log")
	env := append(os.Environ(),
		"TF_CLI_CONFIG_FILE="+rc,
		"TF_IN_AUTOMATION=1",
		"CHECKPOINT_DISABLE=1",
		"TF_LOG_PROVIDER=TRACE",
		"TF_LOG_PATH="+logPath,
	)
	return &terraformCLI{t: t, dir: dir, logPath: logPath, env: env}
}

// writeConfig writes main.tf: hcl, with the provider's source declared.
func (c *terraformCLI) writeConfig(hcl string) {
	c.t.Helper()
	source := strings.TrimPrefix(RegistryAddress, "registry.terraform.io/")
	hcl = fmt.Sprintf("terraform {\n  required_providers {\n    gitlabk8s = { source = %q }\n  }\n}\n", source) + hcl
	if err := os.WriteFile(filepath.Join(c.dir, "main.tf"), []byte(hcl), 0o600); err != nil {
		c.t.Fatal(err)
	}
}

func (c *terraformCLI) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "terraform", append(args, "-no-color")...)
	cmd.Dir = c.dir
	cmd.Env = c.env
	// Its own process group, so a test can signal terraform and the provider together.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// run runs terraform to completion and returns its combined output.
func (c *terraformCLI) run(args ...string) (string, error) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := c.command(ctx, args...).CombinedOutput()
	return string(out), err
}

// mustRun runs terraform and fails the test when it fails.
func (c *terraformCLI) mustRun(args ...string) string {
	c.t.Helper()
	out, err := c.run(args...)
	if err != nil {
		c.t.Fatalf("terraform %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// start runs terraform in the background; the output goes to the returned buffer.
func (c *terraformCLI) start(args ...string) (*exec.Cmd, *lockedBuffer) {
	c.t.Helper()
	cmd := c.command(context.Background(), args...)
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
		}
	})
	return cmd, out
}

// providerLog returns what the provider logged so far.
func (c *terraformCLI) providerLog() string {
	c.t.Helper()
	data, err := os.ReadFile(c.logPath)
	if err != nil {
		c.t.Fatalf("read the provider log: %v", err)
	}
	return string(data)
}

// childPIDs returns the processes whose parent is pid (the provider plugin of terraform).
func childPIDs(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, f := range tasks {
		data, _ := os.ReadFile(f)
		for _, field := range strings.Fields(string(data)) {
			if n, err := strconv.Atoi(field); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// lockedBuffer is a bytes.Buffer safe for a process writing while a test reads.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
