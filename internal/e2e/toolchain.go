package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ProviderVersion is the version the end-to-end tests build and install.
const ProviderVersion = "0.0.1"

// CLI is a Terraform-compatible command line.
type CLI struct {
	// Name is "terraform" or "tofu".
	Name string
	Path string
}

// RepoRoot returns the nearest folder above the working directory that
// holds go.mod.
func RepoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find repository root: %w", err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("find repository root: no go.mod in %s or above", wd)
		}
	}
}

// InstallProviderMirror builds the provider from the checkout at repoRoot
// into a filesystem mirror in dir, for registry.terraform.io and
// registry.opentofu.org alike, with scripts/provider-mirror.sh. It returns
// the CLI configuration to use as TF_CLI_CONFIG_FILE: `init` then installs
// the provider from the mirror as it would from the registry (no
// dev_overrides), and nothing else.
func InstallProviderMirror(ctx context.Context, repoRoot, dir string) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(repoRoot, "scripts", "provider-mirror.sh"), dir)
	cmd.Env = append(os.Environ(), "PROVIDER_VERSION="+ProviderVersion)
	out, err := runScript(cmd)
	if err != nil {
		return "", fmt.Errorf("build the provider mirror: %w", err)
	}
	return out, nil
}

// FindTerraform returns $GITLABK8S_TERRAFORM (scripts/test.sh sets it when
// terraform is on PATH), else terraform from PATH.
func FindTerraform() (CLI, error) {
	if path := os.Getenv("GITLABK8S_TERRAFORM"); path != "" {
		if _, err := os.Stat(path); err != nil {
			return CLI{}, fmt.Errorf("GITLABK8S_TERRAFORM: %w", err)
		}
		return CLI{Name: "terraform", Path: path}, nil
	}
	path, err := exec.LookPath("terraform")
	if err != nil {
		return CLI{}, fmt.Errorf("find terraform: %w", err)
	}
	return CLI{Name: "terraform", Path: path}, nil
}

// BuildOpenTofu returns $GITLABK8S_TOFU (scripts/test.sh builds OpenTofu and
// sets it), else OpenTofu built from the Go module proxy by
// scripts/build-opentofu.sh the first time (minutes) and cached in bin/.
func BuildOpenTofu(ctx context.Context, repoRoot string) (CLI, error) {
	if path := os.Getenv("GITLABK8S_TOFU"); path != "" {
		if _, err := os.Stat(path); err != nil {
			return CLI{}, fmt.Errorf("GITLABK8S_TOFU: %w", err)
		}
		return CLI{Name: "tofu", Path: path}, nil
	}
	cmd := exec.CommandContext(ctx, filepath.Join(repoRoot, "scripts", "build-opentofu.sh"))
	out, err := runScript(cmd)
	if err != nil {
		return CLI{}, fmt.Errorf("build OpenTofu: %w", err)
	}
	return CLI{Name: "tofu", Path: out}, nil
}

// runScript runs a script that prints one path on stdout and returns it.
func runScript(cmd *exec.Cmd) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s: %w\n%s", filepath.Base(cmd.Path), err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if last == "" {
		return "", fmt.Errorf("%s printed no path", filepath.Base(cmd.Path))
	}
	return last, nil
}

// FindGitLabCILocal returns $GITLABK8S_GITLAB_CI_LOCAL (scripts/test.sh
// installs gitlab-ci-local and sets it), else the one
// scripts/install-gitlab-ci-local.sh installs from npm the first time.
func FindGitLabCILocal(ctx context.Context, repoRoot string) (string, error) {
	if path := os.Getenv("GITLABK8S_GITLAB_CI_LOCAL"); path != "" {
		if _, err := os.Stat(path); err != nil {
			return "", fmt.Errorf("GITLABK8S_GITLAB_CI_LOCAL: %w", err)
		}
		return path, nil
	}
	out, err := runScript(exec.CommandContext(ctx, filepath.Join(repoRoot, "scripts", "install-gitlab-ci-local.sh")))
	if err != nil {
		return "", fmt.Errorf("install gitlab-ci-local: %w", err)
	}
	return out, nil
}
