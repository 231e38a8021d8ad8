package provider

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// benchEnvironmentAndRelease is an environment and a release of the benchmarks' generated chart
// with objects objects in its namespace, as the benchmark plans them.
func benchEnvironmentAndRelease(t *testing.T, name, namespace string, objects int, revision string) string {
	t.Helper()
	chartDir, err := filepath.Abs(filepath.Join("..", "..", "scripts", "bench", "chart"))
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf(`
provider "gitlabk8s" {}

resource "gitlabk8s_environment" "test" {
  name      = %q
  namespace = %q
}

resource "gitlabk8s_release" "app" {
  name      = "app"
  namespace = gitlabk8s_environment.test.namespace
  chart     = %q
  timeout   = "5m"
  set       = { objects = %d, revision = %q }
}
`, name, namespace, chartDir, objects, revision)
}

// countOf is how many of requests are request, or start with prefix when it ends in "*".
func countOf(requests []string, request string) int {
	n := 0
	for _, r := range requests {
		if prefix, ok := strings.CutSuffix(request, "*"); ok && strings.HasPrefix(r, prefix) || r == request {
			n++
		}
	}
	return n
}

// Through the GitLab agent's tunnel every request is a round trip, so a plan asks for each
// thing once: the environment's namespace is read with its other objects, Helm's records of
// the release once for the refresh and the plan, and the OpenAPI
// documents of built-in group versions are never downloaded from a cluster of a Kubernetes
// version whose documents the provider ships.
func TestAccRelease_whatAPlanAsksOfTheCluster(t *testing.T) {
	e := testAccRelease(t)
	_, name, namespace := envTest(t, "requests")
	gateway := e.behindGateway(t)
	cli := newTerraformCLI(t, suiteCLI(t))
	cli.writeConfig(benchEnvironmentAndRelease(t, name, namespace, 10, "1"))
	cli.mustRun("apply", "-auto-approve")
	t.Cleanup(func() { cli.mustRun("destroy", "-auto-approve") })

	gateway.Requests()
	if plan := cli.mustRun("plan", "-detailed-exitcode"); !strings.Contains(plan, "No changes.") {
		t.Fatalf("the plan after the apply is not empty:\n%s", plan)
	}
	noChange := gateway.Requests()
	t.Logf("a plan with no change made %d requests:\n%s", len(noChange), strings.Join(noChange, "\n"))
	if n := countOf(noChange, "GET /api/v1/namespaces/"+namespace); n != 1 {
		t.Errorf("a plan with no change read the namespace %d times, want once", n)
	}
	records := "GET /api/v1/namespaces/" + namespace + "/secrets?labelSelector=name%3Dapp%2Cowner%3Dhelm"
	if n := countOf(noChange, records); n != 1 {
		t.Errorf("a plan with no change read Helm's records of the release %d times, want once", n)
	}

	cli.writeConfig(benchEnvironmentAndRelease(t, name, namespace, 10, "2"))
	if _, err := cli.run("plan", "-detailed-exitcode"); err == nil {
		t.Fatal("the plan of a changed value says nothing changes")
	}
	change := gateway.Requests()
	t.Logf("a plan with one change made %d requests:\n%s", len(change), strings.Join(change, "\n"))
	if n := countOf(change, records); n != 1 {
		t.Errorf("a plan with one change read Helm's records of the release %d times, want once", n)
	}
	if countOf(change, "GET /openapi/v3") == 0 {
		t.Error("the plan of a change did not list the cluster's OpenAPI documents: the schema check did not run")
	}
	if n := countOf(change, "GET /openapi/v3/*"); n != 0 {
		t.Errorf("the plan of a change downloaded %d OpenAPI documents of built-in group versions the provider ships", n)
	}
	if !slices.ContainsFunc(change, func(r string) bool { return strings.HasPrefix(r, "PATCH ") && strings.Contains(r, "dryRun=All") }) {
		t.Error("the plan of a change made no server-side dry run")
	}
}
