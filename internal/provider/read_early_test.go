package provider

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/kube"
)

// A read sent while the probe is under way is given up when the probe finds no API server:
// an endpoint that takes connections and answers nothing (a tunnel whose far side is gone)
// does not hold the refresh until the read's own timeout, and the probe's failure is the
// diagnostic.
func TestReadEarly_theProbesFailureStopsTheReads(t *testing.T) {
	released := make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/version":
			http.Error(w, "no API server behind the tunnel", http.StatusForbidden)
		case "/api", "/apis":
			http.NotFound(w, r)
		default:
			select { // the read: never answered while the test runs
			case <-r.Context().Done():
			case <-released:
			}
		}
	}))
	t.Cleanup(hs.Close)
	t.Cleanup(func() { close(released) })
	d := &providerData{conn: kube.NewConnection(kube.Options{Host: hs.URL})}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var diags diag.Diagnostics
	var readErr error
	clients := d.readEarly(ctx, "reading the environment's namespace review-1", &diags, func(ctx context.Context, c *kube.Clients) {
		_, readErr = c.Kubernetes.CoreV1().Namespaces().Get(ctx, "review-1", metav1.GetOptions{})
	})
	if clients != nil {
		t.Fatal("readEarly returned clients although the probe failed")
	}
	if ctx.Err() != nil {
		t.Fatal("the read held the refresh until the test's deadline: the probe's failure did not stop it")
	}
	if readErr == nil {
		t.Error("the read succeeded against a server that answers nothing")
	}
	if !diags.HasError() || diags[0].Summary() != "Unable to Reach Kubernetes Cluster" || !strings.Contains(diags[0].Detail(), "Reading the environment's namespace review-1") {
		t.Errorf("diagnostics = %v, want the probe's failure naming the read", diags)
	}
}
