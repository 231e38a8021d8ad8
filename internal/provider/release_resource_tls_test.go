package provider

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chart"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chartserver"
)

// remoteWebRelease is a gitlabk8s_release "web" of chart (a reference or a name in
// repository), version 1.0.0, in namespace; body adds attributes.
func remoteWebRelease(namespace, chart, body string) string {
	return fmt.Sprintf(`
resource "gitlabk8s_release" "web" {
  name      = "web"
  namespace = %q
  chart     = %q
  version   = "1.0.0"
%s
}
`, namespace, chart, body)
}

// A chart in an HTTPS registry whose certificate a private CA signed: without the CA the plan
// says to set repository_ca_file, with it the release installs, insecure_skip_tls_verify
// reaches it without the CA, and plain_http is refused by the registry's TLS.
func TestAccRelease_ociRegistryOverTLS(t *testing.T) {
	e := testAccRelease(t)
	registry := chartserver.NewOCIRegistry(t, chartserver.WithTLS(), chartserver.WithBasicAuth("deployer", "tls-pass-51d0"))
	ref, digest := registry.PublishFixture(t, "web")
	credentials := "  repository_username = \"deployer\"\n  repository_password = \"tls-pass-51d0\"\n"
	release := func(body string) string { return remoteWebRelease(e.namespace, ref, credentials+body) }
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:   release(""),
				PlanOnly: true,
				ExpectError: wrappedText("Untrusted Repository Certificate", "signed by a certificate authority",
					"x509: certificate signed by unknown authority", "Set repository_ca_file", "insecure_skip_tls_verify = true"),
			},
			{
				Config: release(fmt.Sprintf("  repository_ca_file = %q\n", registry.CA.CertFile)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(webAddress, tfjsonpathManifest("Deployment.apps/web"), knownStringContaining("image: registry.example/web:1.25.0")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("chart_digest"), knownvalue.StringExact(digest)),
					statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("status"), knownvalue.StringExact("deployed")),
				},
			},
			{
				// Only how the chart is reached changes: the revision stays.
				Config: release("  insecure_skip_tls_verify = true\n"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("chart_digest"), knownvalue.StringExact(digest)),
					statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("revision"), knownvalue.Int64Exact(1)),
				},
			},
			{
				Config:      release("  plain_http = true\n"),
				PlanOnly:    true,
				ExpectError: wrappedText("Registry Speaks HTTPS", "answers HTTPS, not plain HTTP", "Remove plain_http = true"),
			},
		},
	})
}

// A chart in an HTTPS chart repository (index.yaml and packages) signed by a private CA.
func TestAccRelease_httpRepositoryOverTLS(t *testing.T) {
	e := testAccRelease(t)
	repo := chartserver.NewHTTPRepository(t, chartserver.WithClientCertificates())
	digest := repo.PublishFixture(t, "web")
	certFile, keyFile := repo.CA.ClientCertificate(t, "deployer")
	body := fmt.Sprintf("  repository = %q\n  repository_ca_file = %q\n", repo.URL, repo.CA.CertFile)
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      remoteWebRelease(e.namespace, "web", fmt.Sprintf("  repository = %q\n", repo.URL)),
				PlanOnly:    true,
				ExpectError: wrappedText("Untrusted Repository Certificate", "repository_ca_file"),
			},
			{
				Config: remoteWebRelease(e.namespace, "web", body+fmt.Sprintf("  repository_cert_file = %q\n  repository_key_file = %q\n", certFile, keyFile)),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("chart_digest"), knownvalue.StringExact(digest)),
					statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("status"), knownvalue.StringExact("deployed")),
				},
			},
		},
	})
}

// The TLS attributes are checked at validate time, before anything is fetched, each error on
// the attribute it concerns.
func TestRelease_repositoryTLSValidation(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", t.TempDir())
	ca := chartserver.NewTestCA(t)
	certFile, keyFile := ca.ClientCertificate(t, "deployer")
	_, otherKey := chartserver.NewTestCA(t).ClientCertificate(t, "deployer")
	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "absent.pem")
	// A local chart reads none of the files, so only the validation can refuse them.
	ref := chartserver.FixtureChart("web")
	step := func(body string, want ...string) resource.TestStep {
		return resource.TestStep{
			Config:      offlineProvider("v1.30.4") + remoteWebRelease("review-tls", ref, body),
			PlanOnly:    true,
			ExpectError: wrappedText(want...),
		}
	}
	testUnitResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			step(fmt.Sprintf("  repository_ca_file = %q\n", missing), "Invalid Repository CA File", "repository_ca_file", "no such file"),
			step(fmt.Sprintf("  repository_ca_file = %q\n", notPEM), "Invalid Repository CA File", "repository_ca_file", "holds no PEM certificate"),
			step(fmt.Sprintf("  repository_ca_file = %q\n", keyFile), "Invalid Repository CA File", `type "PRIVATE KEY"`),
			step(fmt.Sprintf("  repository_cert_file = %q\n", certFile), "repository_key_file", "must be specified"),
			step(fmt.Sprintf("  repository_cert_file = %q\n  repository_key_file = %q\n", certFile, otherKey),
				"Invalid Repository Key File", "repository_key_file", "does not go with the client certificate"),
			{
				Config: offlineProvider("v1.30.4") + remoteWebRelease("review-tls", "oci://registry.example/charts/web",
					fmt.Sprintf("  plain_http = true\n  repository_ca_file = %q\n", ca.CertFile)),
				PlanOnly:    true,
				ExpectError: wrappedText("Conflicting Repository Settings", "plain_http", "repository_ca_file would never be used"),
			},
			{
				Config: offlineProvider("v1.30.4") + remoteWebRelease("review-tls", "web",
					"  repository = \"oci://registry.example/charts\"\n  plain_http = true\n  insecure_skip_tls_verify = true\n"),
				PlanOnly:    true,
				ExpectError: wrappedText("Conflicting Repository Settings", "insecure_skip_tls_verify"),
			},
			{
				// A chart directory may have dependencies in an HTTPS repository and a plain-HTTP registry.
				Config:             offlineProvider("v1.30.4") + remoteWebRelease("review-tls", ref, fmt.Sprintf("  plain_http = true\n  repository_ca_file = %q\n", ca.CertFile)),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				Config:      offlineProvider("v1.30.4") + remoteWebRelease("review-tls", "web", "  repository = \"https://charts.example\"\n  plain_http = true\n"),
				PlanOnly:    true,
				ExpectError: wrappedText("Conflicting Repository Settings", "plain_http applies to OCI registries", "http://"),
			},
		},
	})
}

// The dependencies dependency_update fetches are reached with the release's TLS attributes.
func TestAccRelease_dependencyUpdateOverTLS(t *testing.T) {
	e := testAccRelease(t)
	registry := chartserver.NewOCIRegistry(t, chartserver.WithTLS())
	registry.PublishFixture(t, "web")
	app := writeChart(t, "app", map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n  - name: web\n    version: 1.0.0\n    repository: " + registry.Repository() + "\n",
	})
	config := func(body string) string {
		return releaseConfig("deps", e.namespace, app, "  dependency_update = true\n"+body)
	}
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      config(""),
				PlanOnly:    true,
				ExpectError: wrappedText("Untrusted Repository Certificate", "x509: certificate signed by unknown authority", "Set repository_ca_file"),
			},
			{
				Config: config(fmt.Sprintf("  repository_ca_file = %q\n", registry.CA.CertFile)),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue("gitlabk8s_release.deps", tfjsonpath.New("manifests"), knownvalue.MapPartial(map[string]knownvalue.Check{
						"Deployment.apps/deps": knownStringContaining("image: registry.example/web:1.25.0"),
					})),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("gitlabk8s_release.deps", tfjsonpath.New("status"), knownvalue.StringExact("deployed")),
				},
			},
		},
	})
}

// Each failure to reach the repository lands on the attribute that fixes it, for an OCI
// registry and for an HTTP repository.
func TestRepositoryConnectionDiagnostic(t *testing.T) {
	oci := &releaseModel{Name: types.StringValue("web"), Namespace: types.StringValue("review"), Chart: types.StringValue("oci://r.example/charts/web")}
	repo := &releaseModel{Name: types.StringValue("web"), Namespace: types.StringValue("review"), Chart: types.StringValue("web"), Repository: types.StringValue("https://charts.example")}
	tlsErr := func(kind chart.TLSErrorKind) error {
		return fmt.Errorf("load: %w", &chart.TLSError{Kind: kind, Host: "r.example", Err: errors.New("secret-token in a URL")})
	}
	for _, tt := range []struct {
		name      string
		m         *releaseModel
		err       error
		attribute string
		summary   string
	}{
		{"untrusted", oci, tlsErr(chart.UnknownAuthority), "repository_ca_file", "Untrusted Repository Certificate"},
		{"invalid certificate", oci, tlsErr(chart.InvalidCertificate), "repository", "Invalid Repository Certificate"},
		{"registry speaks HTTP", oci, tlsErr(chart.ServerSpeaksHTTP), "plain_http", "Registry Speaks Plain HTTP"},
		{"registry speaks HTTPS", oci, tlsErr(chart.ServerSpeaksHTTPS), "plain_http", "Registry Speaks HTTPS"},
		{"repository speaks HTTP", repo, tlsErr(chart.ServerSpeaksHTTP), "repository", "Repository Speaks Plain HTTP"},
		{"repository speaks HTTPS", repo, tlsErr(chart.ServerSpeaksHTTPS), "repository", "Repository Speaks HTTPS"},
		{"CA file gone", oci, &chart.TLSFileError{File: chart.TLSFileCA, Path: "/ca.pem", Err: os.ErrNotExist}, "repository_ca_file", "Invalid Repository CA File"},
		{"key file", oci, &chart.TLSFileError{File: chart.TLSFileKey, Path: "/key.pem", Err: os.ErrNotExist}, "repository_key_file", "Invalid Repository Key File"},
	} {
		d, ok := repositoryConnectionDiagnostic(diagnosticsHiding("secret-token"), tt.m, tt.err)
		if !ok {
			t.Errorf("%s: no diagnostic", tt.name)
			continue
		}
		at, _ := d.(diag.DiagnosticWithPath)
		if at == nil || !at.Path().Equal(path.Root(tt.attribute)) || d.Summary() != tt.summary {
			t.Errorf("%s: %q on %v, want %q on %s", tt.name, d.Summary(), at, tt.summary, tt.attribute)
		}
		if strings.Contains(d.Detail(), "secret-token") {
			t.Errorf("%s: the detail is not redacted: %s", tt.name, d.Detail())
		}
	}
	if _, ok := repositoryConnectionDiagnostic(noRelease, oci, errors.New("not found")); ok {
		t.Error("a failure that is no TLS matter got a TLS diagnostic")
	}
}
