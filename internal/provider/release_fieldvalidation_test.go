package provider

import (
	"regexp"
	"strings"
	"testing"
)

// An install and an upgrade read no OpenAPI document of a built-in group version: kubectl's
// field validation, which Helm runs on the objects it applies, reads the document of each
// object's group version only to learn that the API server validates the object's fields
// itself (the apply asks it to), and the provider knows that of the built-in kinds of the
// Kubernetes versions it ships documents for. Through the GitLab agent's tunnel those documents
// were megabytes at every apply. The plans before them read the index alone.
func TestAccRelease_applyReadsNoBuiltInDocument(t *testing.T) {
	e := testAccRelease(t)
	gateway := e.behindGateway(t)
	cli := newTerraformCLI(t, suiteCLI(t))
	document := regexp.MustCompile(`^GET /openapi/v3/apis?/`)
	for _, revision := range []string{"1", "2"} {
		gateway.Requests()
		cli.writeConfig(benchRelease(t, e.namespace, 10, revision))
		cli.mustRun("apply", "-auto-approve")
		var read []string
		applied := false
		for _, r := range gateway.Requests() {
			if document.MatchString(r) {
				read = append(read, r)
			}
			applied = applied || strings.Contains(r, "fieldValidation=Strict")
		}
		if !applied {
			t.Fatalf("revision %s: no request of the apply asked the server to validate fields; the test proved nothing", revision)
		}
		if len(read) > 0 {
			t.Errorf("revision %s: the apply read OpenAPI documents:\n%s", revision, strings.Join(read, "\n"))
		}
	}
	if got := e.helmRevisions(t, "app"); len(got) != 2 {
		t.Fatalf("helm history = %v, want two revisions", got)
	}
}
