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

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/e2e"
)

// These helpers run the real terraform and tofu CLIs against a provider binary built from this
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

// TestMain removes the provider binary buildProviderBinary built (about 150 MB, in the system's
// temporary folder) once the package's tests have run.
func TestMain(m *testing.M) {
	code := m.Run()
	if providerBinaryDir != "" {
		_ = os.RemoveAll(providerBinaryDir)
	}
	os.Exit(code)
}

// buildProviderBinary builds the provider once per test run; TestMain removes it.
func buildProviderBinary(t *testing.T) string {
	t.Helper()
	providerBinaryOnce.Do(func() {
		dir, err := e2e.ProcessTempDir("gitlabk8s-provider-")
		if err != nil {
			providerBinaryErr = err
			return
		}
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Join(filepath.Dir(file), "..", "..")
		args := []string{"build", "-o", filepath.Join(dir, "terraform-provider-gitlabk8s")}
		if raceEnabled {
			// The provider runs in terraform's child process: its races are found only there.
			args = append(args, "-race")
		}
		cmd := exec.Command("go", append(args, ".")...)
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

// cliBinary is a Terraform-compatible command line: terraform or OpenTofu's tofu.
type cliBinary struct {
	name string
	path string
}

// findCLI returns the path of the terraform or tofu binary to test with: TF_ACC_TERRAFORM_PATH
// when it is that CLI (scripts/test.sh sets it to the one terraform-plugin-testing runs), else
// GITLABK8S_TERRAFORM or GITLABK8S_TOFU (scripts/test.sh sets them to terraform from PATH and
// the OpenTofu it builds), else terraform from PATH or the newest OpenTofu build in
// $GITLABK8S_BIN_DIR. The reason says what was looked at when there is none.
func findCLI(name string) (path, reason string) {
	if p := os.Getenv("TF_ACC_TERRAFORM_PATH"); p != "" && filepath.Base(p) == name {
		return p, ""
	}
	envVar := "GITLABK8S_" + strings.ToUpper(name)
	if p := os.Getenv(envVar); p != "" {
		return p, ""
	}
	if name == "terraform" {
		if p, err := exec.LookPath("terraform"); err == nil {
			return p, ""
		}
		return "", "no terraform: TF_ACC_TERRAFORM_PATH is not terraform, GITLABK8S_TERRAFORM is unset and PATH has none"
	}
	binDir := os.Getenv("GITLABK8S_BIN_DIR")
	if binDir == "" {
		_, file, _, _ := runtime.Caller(0)
		binDir = filepath.Join(filepath.Dir(file), "..", "..", "bin")
	}
	if matches, _ := filepath.Glob(filepath.Join(binDir, "opentofu-*", "tofu")); len(matches) > 0 {
		return matches[len(matches)-1], ""
	}
	return "", "no tofu: TF_ACC_TERRAFORM_PATH is not tofu, GITLABK8S_TOFU is unset and " + binDir + " holds no opentofu-*/tofu; scripts/build-opentofu.sh builds one"
}

// forEachCLI runs test as the subtests terraform and tofu, each with that CLI (findCLI); a CLI
// that is not there skips its subtest, saying so. The CLI the suite runs (TF_ACC_TERRAFORM_PATH)
// must be there.
func forEachCLI(t *testing.T, test func(t *testing.T, bin cliBinary)) {
	t.Helper()
	testAccCluster(t)
	for _, name := range []string{"terraform", "tofu"} {
		t.Run(name, func(t *testing.T) {
			path, reason := findCLI(name)
			if path == "" {
				if suite := os.Getenv("TF_ACC_TERRAFORM_PATH"); suite == "" && name == "terraform" {
					t.Fatal(reason)
				}
				t.Skip(reason)
			}
			if _, err := os.Stat(path); err != nil {
				t.Fatalf("%s CLI: %v", name, err)
			}
			t.Logf("toolchain: %s=%s", name, path)
			test(t, cliBinary{name: name, path: path})
		})
	}
}

// suiteCLI is the CLI the suite runs (TF_ACC_TERRAFORM_PATH), for tests about the provider
// rather than the CLI, which run once.
func suiteCLI(t *testing.T) cliBinary {
	t.Helper()
	path := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if path == "" {
		var reason string
		if path, reason = findCLI("terraform"); path == "" {
			t.Fatal(reason)
		}
	}
	name := "terraform"
	if filepath.Base(path) == "tofu" {
		name = "tofu"
	}
	t.Logf("toolchain: %s=%s", name, path)
	return cliBinary{name: name, path: path}
}

// terraformCLI runs terraform or tofu in a working directory of its own with the built
// provider installed through dev_overrides.
type terraformCLI struct {
	t       *testing.T
	bin     cliBinary
	dir     string
	logPath string
	env     []string
}

func newTerraformCLI(t *testing.T, cli cliBinary) *terraformCLI {
	t.Helper()
	bin := buildProviderBinary(t)
	dir := t.TempDir()
	rc := filepath.Join(dir, "terraformrc")
	// The short source address in writeConfig means registry.terraform.io to terraform and
	// registry.opentofu.org to tofu; override both.
	openTofuAddress := "registry.opentofu.org/" + strings.TrimPrefix(RegistryAddress, "registry.terraform.io/")
	if err := os.WriteFile(rc, []byte(fmt.Sprintf(`provider_installation {
  dev_overrides {
    %q = %q
    %q = %q
  }
  direct {}
}
`, RegistryAddress, bin, openTofuAddress, bin)), 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "provider.log")
	// A provider built with -race reports a race on its stderr, which terraform logs.
	t.Cleanup(func() {
		data, _ := os.ReadFile(logPath)
		if i := bytes.Index(data, []byte("WARNING: DATA RACE")); i >= 0 {
			t.Errorf("the provider reported a data race:\n%s", data[i:min(len(data), i+8<<10)])
		}
	})
	env := append(os.Environ(),
		"TF_CLI_CONFIG_FILE="+rc,
		"TF_IN_AUTOMATION=1",
		"CHECKPOINT_DISABLE=1",
		"TF_LOG_PROVIDER=TRACE",
		"TF_LOG_PATH="+logPath,
	)
	return &terraformCLI{t: t, bin: cli, dir: dir, logPath: logPath, env: env}
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
	cmd := exec.CommandContext(ctx, c.bin.path, append(args, "-no-color")...)
	cmd.Dir = c.dir
	cmd.Env = c.env
	// Its own process group, so a test can signal terraform and the provider together.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// run runs the CLI to completion and returns its combined output.
func (c *terraformCLI) run(args ...string) (string, error) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := c.command(ctx, args...).CombinedOutput()
	return string(out), err
}

// mustRun runs the CLI and fails the test when it fails.
func (c *terraformCLI) mustRun(args ...string) string {
	c.t.Helper()
	out, err := c.run(args...)
	if err != nil {
		c.t.Fatalf("%s %s: %v\n%s", c.bin.name, strings.Join(args, " "), err, out)
	}
	return out
}

// start runs the CLI in the background; the output goes to the returned buffer.
func (c *terraformCLI) start(args ...string) (*exec.Cmd, *e2e.SyncBuffer) {
	c.t.Helper()
	cmd := c.command(context.Background(), args...)
	out := &e2e.SyncBuffer{}
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

// providerLog returns what the provider logged so far, and fails the test when it holds no
// trace message of the provider.
func (c *terraformCLI) providerLog() string {
	c.t.Helper()
	data, err := os.ReadFile(c.logPath)
	if err != nil {
		c.t.Fatalf("read the provider log: %v", err)
	}
	// A check that finds nothing in an empty log proves nothing.
	if log := string(data); !strings.Contains(log, "@level=trace") && !strings.Contains(log, "[TRACE]") {
		c.t.Fatalf("the provider log holds no trace messages; TF_LOG_PROVIDER=TRACE is not captured (%d bytes)", len(data))
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
