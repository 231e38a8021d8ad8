package provider

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// A plan no refresh came before, and an apply, read the record of the revision the state
// records while they list Helm's history, not after the list's answer: through the GitLab
// agent's tunnel that is one round trip, not two. The gateway holds each LIST of the release's
// records until the GET of the revision the state records (1) is under way; an apply that waited
// for the LIST before reading the record leaves the LIST held until the hold's time is up.
func TestAccRelease_readsTheRecordedRevisionBesideTheHistory(t *testing.T) {
	e, gateway, cli := appliedBehindGateway(t, 10)
	records := "/api/v1/namespaces/" + e.namespace + "/secrets"
	historyList := func(r *http.Request) bool {
		return r.Method == http.MethodGet && r.URL.Path == records &&
			r.URL.Query().Get("labelSelector") == "name=app,owner=helm" &&
			strings.Contains(r.Header.Get("Accept"), "as=PartialObjectMetadataList")
	}
	recordedGet := func(r *http.Request) bool {
		return r.Method == http.MethodGet && r.URL.Path == records+"/sh.helm.release.v1.app.v1"
	}
	gateway.Requests()
	hold := gateway.Hold(historyList, recordedGet, 3*time.Second)
	cli.writeConfig(benchRelease(t, e.namespace, 10, "2"))
	cli.mustRun("apply", "-auto-approve", "-refresh=false")
	held, timedOut := hold.Counts()
	if held < 2 {
		t.Fatalf("the gateway held %d LISTs of the release's history; want the plan's and the apply's at least: the test proved nothing", held)
	}
	if timedOut > 0 {
		t.Errorf("%d of %d LISTs of the release's history waited for their answer before the state's record was read", timedOut, held)
	}
	if got := e.helmRevisions(t, "app"); len(got) != 2 {
		t.Fatalf("helm history = %v, want two revisions", got)
	}
}
