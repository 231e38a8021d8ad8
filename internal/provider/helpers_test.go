package provider

// The helpers that test files of several concerns share. Each harness keeps its own file:
// provider_test.go (the provider factories and runners), release_cli_test.go (terraform and
// tofu as CLIs), release_plancheck_test.go (plan checks of manifests), admission_webhook_test.go,
// release_resource_test.go (a release's test namespace) and environment_resource_test.go.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chartserver"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/testcluster"
)

// wrappedText matches the given phrases in order in terraform's output, which wraps lines.
func wrappedText(phrases ...string) *regexp.Regexp {
	parts := make([]string, len(phrases))
	for i, p := range phrases {
		parts[i] = strings.Join(strings.Fields(regexp.QuoteMeta(p)), `\s+`)
	}
	return regexp.MustCompile(`(?s)` + strings.Join(parts, ".*"))
}

func sameElements(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, s := range a {
		seen[s]++
	}
	for _, s := range b {
		seen[s]--
		if seen[s] < 0 {
			return false
		}
	}
	return true
}

// wrappedPattern compiles a pattern in which each space matches any whitespace, as Terraform
// wraps diagnostics at word boundaries.
func wrappedPattern(pattern string) *regexp.Regexp {
	return regexp.MustCompile(strings.ReplaceAll(pattern, " ", `\s+`))
}

// writeChart writes a chart of files (paths relative to the chart directory) and returns its
// directory.
func writeChart(t *testing.T, name string, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	for file, content := range files {
		path := filepath.Join(dir, file)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// diagnosticText joins the lines Terraform wraps a diagnostic into, frame and all, with single spaces.
func diagnosticText(out string) string {
	return diagnosticFrame.ReplaceAllString(out, " ")
}

// assertNoPasswordForm checks text as it is and with its whitespace collapsed, as Terraform
// wraps diagnostics at spaces.
func assertNoPasswordForm(t *testing.T, where, text string, passwords ...string) {
	t.Helper()
	text += "\n" + strings.Join(strings.Fields(text), " ")
	for _, password := range passwords {
		for name, form := range chartserver.SecretFormsLeaks(password) {
			if i := strings.Index(text, form); i >= 0 {
				t.Errorf("%s shows the password as %s (%q) near: %q", where, name, form, text[max(0, i-160):min(len(text), i+len(form)+40)])
			}
		}
	}
}

// nonSensitiveValues returns the attribute values of every resource in a `terraform show
// -json` document (plan or state), without the attributes the schema marks sensitive.
func nonSensitiveValues(t *testing.T, showJSON string) (string, int) {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(showJSON), &doc); err != nil {
		t.Fatalf("parse terraform show -json: %v", err)
	}
	var values []any
	var collect func(v any)
	collect = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if attrs, ok := x["values"].(map[string]any); ok && x["type"] == "gitlabk8s_release" {
				values = append(values, attrs)
			}
			if change, ok := x["change"].(map[string]any); ok && x["type"] == "gitlabk8s_release" {
				for _, side := range []string{"before", "after"} {
					if attrs, ok := change[side].(map[string]any); ok {
						values = append(values, attrs)
					}
				}
			}
			for k, e := range x {
				if k != "configuration" {
					collect(e)
				}
			}
		case []any:
			for _, e := range x {
				collect(e)
			}
		}
	}
	collect(doc)
	for _, v := range values {
		attrs := v.(map[string]any)
		delete(attrs, "set_sensitive")
		delete(attrs, "values_sensitive")
		delete(attrs, "repository_password")
	}
	out, err := json.Marshal(values)
	if err != nil {
		t.Fatal(err)
	}
	return string(out), len(values)
}

// helmBinary returns the helm 3 CLI to test with (helmCLIVersions[0]), skipping when there
// is none.
func helmBinary(t *testing.T) string {
	t.Helper()
	return helmCLIVersions[0].binary(t)
}

// helm4Binary returns the helm 4 CLI to test with (helmCLIVersions[1]), skipping when there
// is none.
func helm4Binary(t *testing.T) string {
	t.Helper()
	return helmCLIVersions[1].binary(t)
}

// helmCLIVersion is one major version of the helm CLI that must work on the provider's
// releases: the variable scripts/test.sh exports its build in, and the folder scripts/build-helm.sh
// builds it into.
type helmCLIVersion struct {
	name string
	env  string
	glob string
}

// helmCLIVersions are the helm CLIs tested against the provider's releases: helm 3 and helm 4
// write the same release records, and teams run either by hand.
var helmCLIVersions = []helmCLIVersion{
	{name: "helm3", env: "GITLABK8S_HELM", glob: "helm-v3.*"},
	{name: "helm4", env: "GITLABK8S_HELM4", glob: "helm-v4.*"},
}

// binary returns the CLI: $env, else the newest build of its major version in
// $GITLABK8S_BIN_DIR or the checkout's bin/. Skips, naming the variable, when there is none.
func (v helmCLIVersion) binary(t *testing.T) string {
	t.Helper()
	if path := os.Getenv(v.env); path != "" {
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("%s=%s: %v", v.env, path, err)
		}
		t.Logf("toolchain: helm=%s", path)
		return path
	}
	binDir := os.Getenv("GITLABK8S_BIN_DIR")
	if binDir == "" {
		_, file, _, _ := runtime.Caller(0)
		binDir = filepath.Join(filepath.Dir(file), "..", "..", "bin")
	}
	matches, _ := filepath.Glob(filepath.Join(binDir, v.glob, "helm"))
	if len(matches) == 0 {
		t.Skipf("no %s CLI: %s is unset and %s holds no %s/helm; scripts/test.sh builds it with scripts/build-helm.sh", v.name, v.env, binDir, v.glob)
	}
	t.Logf("toolchain: helm=%s", matches[len(matches)-1])
	return matches[len(matches)-1]
}

// forEachHelmCLI runs test once per helm CLI, as a subtest named after it, each with a
// namespace of its own and a function running that CLI in it.
func forEachHelmCLI(t *testing.T, test func(t *testing.T, e *releaseTestEnv, helm func(args ...string) string)) {
	for _, v := range helmCLIVersions {
		t.Run(v.name, func(t *testing.T) {
			binary := v.binary(t)
			e := testAccRelease(t)
			test(t, e, e.helmCLIOf(t, binary))
		})
	}
}

// runHelmIn runs the helm CLI against namespace of c with a configuration of its own.
func runHelmIn(t *testing.T, helm string, c *testcluster.Cluster, namespace string, args ...string) string {
	t.Helper()
	cmd := exec.Command(helm, append(args, "--namespace", namespace, "--kubeconfig", c.Kubeconfig)...)
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home+"/cache", "HELM_CONFIG_HOME="+home+"/config", "HELM_DATA_HOME="+home+"/data")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
