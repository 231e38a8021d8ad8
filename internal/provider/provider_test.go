package provider

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/testcluster"
)

// testAccProtoV6ProviderFactories serves the provider in-process to the terraform CLI.
var testAccProtoV6ProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
	TypeName: providerserver.NewProtocol6WithError(New("test")()),
}

// terraform-plugin-testing serves the in-process provider at
// registry.terraform.io/$TF_ACC_PROVIDER_NAMESPACE/<name>, and without the variable at the
// legacy "-" and "hashicorp" namespaces, which OpenTofu refuses. Every run gets the namespace
// the provider is published under (RegistryAddress), whichever CLI runs the tests, so a
// configuration naming the provider by an address the tests do not serve fails with terraform
// as it would with tofu.
func init() {
	if os.Getenv(resource.EnvTfAccProviderNamespace) == "" {
		namespace := strings.Split(RegistryAddress, "/")[1]
		if err := os.Setenv(resource.EnvTfAccProviderNamespace, namespace); err != nil {
			panic(err)
		}
	}
}

// testAccProviderSource is the source address terraform-plugin-testing serves the provider
// factory called name at.
func testAccProviderSource(name string) string {
	host := os.Getenv(resource.EnvTfAccProviderHost)
	if host == "" {
		host = "registry.terraform.io"
	}
	return strings.TrimSuffix(host, "/") + "/" + os.Getenv(resource.EnvTfAccProviderNamespace) + "/" + name
}

// testAccRequiredProviders is a terraform block requiring the named provider factories at the
// addresses they are served at. terraform-plugin-testing adds such a block to a step's
// configuration only when the configuration has no terraform block of its own, so one that
// has must require every provider it uses this way.
func testAccRequiredProviders(names ...string) string {
	var b strings.Builder
	b.WriteString("terraform {\n  required_providers {\n")
	for _, name := range names {
		fmt.Fprintf(&b, "    %s = { source = %q }\n", name, testAccProviderSource(name))
	}
	b.WriteString("  }\n}\n")
	return b.String()
}

var terraformBlock = regexp.MustCompile(`terraform\s*{`)

// testAccResourceTest is resource.Test, the one way this package's acceptance tests run a
// test case (TestResourceTestsUseOneRunner), so that an import step always gets its
// configuration right (withImportConfigs).
func testAccResourceTest(t *testing.T, c resource.TestCase) {
	t.Helper()
	resource.Test(t, withImportConfigs(c))
}

// testUnitResourceTest is resource.UnitTest, for the test cases that need no cluster, with
// import steps made as testAccResourceTest makes them.
func testUnitResourceTest(t *testing.T, c resource.TestCase) {
	t.Helper()
	resource.UnitTest(t, withImportConfigs(c))
}

// withImportConfigs returns c with the terraform block added to the configurations of its
// import steps: terraform-plugin-testing writes the Config of an import step as it is, without
// the terraform block it adds to the other steps, so the CLI would look for the provider under
// the default "hashicorp" namespace and find none.
func withImportConfigs(c resource.TestCase) resource.TestCase {
	names := make([]string, 0, len(c.ProtoV6ProviderFactories))
	for name := range c.ProtoV6ProviderFactories {
		names = append(names, name)
	}
	slices.Sort(names)
	c.Steps = slices.Clone(c.Steps)
	for i, step := range c.Steps {
		if step.ImportState && step.Config != "" && !terraformBlock.MatchString(step.Config) {
			c.Steps[i].Config = testAccRequiredProviders(names...) + step.Config
		}
	}
	return c
}

var (
	clusterOnce sync.Once
	cluster     *testcluster.Cluster
	clusterErr  error
)

// testAccCluster returns the local cluster, starting it when none is running. It skips the
// test unless TF_ACC is set, as resource.Test does, so unit runs never start a cluster.
// It points $KUBECONFIG at the cluster's admin context, the default of every acceptance test.
func testAccCluster(t *testing.T) *testcluster.Cluster {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1 to run it against the local cluster")
	}
	clusterOnce.Do(func() { cluster, clusterErr = testcluster.Ensure(context.Background()) })
	if clusterErr != nil {
		t.Fatalf("start the local cluster: %v", clusterErr)
	}
	testAccOn(t, cluster)
	return cluster
}

// testAccOn points $KUBECONFIG at c's admin context and clears every setting of the
// developer's machine that could reach a test's provider configuration.
func testAccOn(t *testing.T, c *testcluster.Cluster) {
	t.Helper()
	// terraform-plugin-testing runs this CLI (scripts/test.sh sets it); make test's summary
	// reports it.
	if path := os.Getenv("TF_ACC_TERRAFORM_PATH"); path != "" {
		t.Logf("toolchain: terraform-plugin-testing=%s", path)
	}
	// Nothing from the developer's machine may leak into a test's provider configuration.
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBECONFIG", c.Kubeconfig)
	for _, v := range []string{"CONFIG_PATH", "CONFIG_CONTEXT", "HOST", "TOKEN", "CLUSTER_CA_CERTIFICATE", "CLIENT_CERTIFICATE", "CLIENT_KEY", "INSECURE", "KUBE_VERSION", "API_VERSIONS"} {
		t.Setenv(envPrefix+v, "")
	}
	for _, v := range []string{"CI_PROJECT_ID", "CI_PROJECT_PATH_SLUG", "CI_ENVIRONMENT_NAME", "CI_ENVIRONMENT_SLUG", "CI_PIPELINE_URL", "CI_JOB_URL", "CI_COMMIT_SHA", "CI_MERGE_REQUEST_IID"} {
		t.Setenv(v, "")
	}
}

// Every test case of the package runs through testAccResourceTest or testUnitResourceTest,
// so no import step can run through a runner that leaves its configuration without the
// provider's source.
func TestResourceTestsUseOneRunner(t *testing.T) {
	if bypasses := directResourceTests(t, "."); len(bypasses) > 0 {
		t.Errorf("test cases run with terraform-plugin-testing's runners directly; use testAccResourceTest or testUnitResourceTest:\n%s",
			strings.Join(bypasses, "\n"))
	}
}

// directResourceTests returns the places in the test files of dir that call resource.Test,
// resource.UnitTest or resource.ParallelTest outside the two runners.
func directResourceTests(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	runners := map[string]bool{"testAccResourceTest": true, "testUnitResourceTest": true}
	var out []string
	fset := token.NewFileSet()
	for _, name := range files {
		file, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && runners[fn.Name.Name] {
				continue
			}
			ast.Inspect(decl, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if pkg, isIdent := sel.X.(*ast.Ident); isIdent && pkg.Name == "resource" && slices.Contains([]string{"Test", "UnitTest", "ParallelTest"}, sel.Sel.Name) {
					out = append(out, fset.Position(call.Pos()).String())
				}
				return true
			})
		}
	}
	return out
}
