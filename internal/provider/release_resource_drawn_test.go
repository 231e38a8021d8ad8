package provider

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"golang.org/x/crypto/bcrypt"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chartserver"
)

// drawnLive is what the cluster holds of a release of the fixture "drawn": each value the
// chart draws, and what it is drawn from.
type drawnLive struct {
	htpasswd, ca, cert, key, appIni, sessionKey, checksum string
	// metricsCert is the second certificate the CA signs, for a name that never changes.
	metricsCert string
}

// readDrawn reads the live objects of release name of the fixture "drawn".
func (e *releaseTestEnv) readDrawn(name string) (drawnLive, error) {
	ctx := context.Background()
	var live drawnLive
	auth, err := e.kube.CoreV1().Secrets(e.namespace).Get(ctx, name+"-auth", metav1.GetOptions{})
	if err != nil {
		return live, err
	}
	tls, err := e.kube.CoreV1().Secrets(e.namespace).Get(ctx, name+"-tls", metav1.GetOptions{})
	if err != nil {
		return live, err
	}
	metrics, err := e.kube.CoreV1().Secrets(e.namespace).Get(ctx, name+"-metrics-tls", metav1.GetOptions{})
	if err != nil {
		return live, err
	}
	var sessionKey string
	if session, err := e.kube.CoreV1().Secrets(e.namespace).Get(ctx, name+"-session", metav1.GetOptions{}); err == nil {
		sessionKey = string(session.Data["session-key"])
	}
	config, err := e.kube.CoreV1().ConfigMaps(e.namespace).Get(ctx, name+"-config", metav1.GetOptions{})
	if err != nil {
		return live, err
	}
	deployment, err := e.kube.AppsV1().Deployments(e.namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return live, err
	}
	return drawnLive{
		htpasswd: string(auth.Data["auth"]), ca: string(tls.Data["ca.crt"]), cert: string(tls.Data["tls.crt"]), key: string(tls.Data["tls.key"]),
		metricsCert: string(metrics.Data["tls.crt"]), appIni: config.Data["app.ini"], sessionKey: sessionKey,
		checksum: deployment.Spec.Template.Annotations["checksum/session"],
	}, nil
}

// passwordVerifies says whether the live htpasswd verifies password.
func (l drawnLive) passwordVerifies(password string) bool {
	_, hash, _ := strings.Cut(l.htpasswd, ":")
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) == nil
}

// certificate parses the live certificate and checks it against the live CA.
func (l drawnLive) certificate() (*x509.Certificate, error) { return l.signedByCA(l.cert) }

// signedByCA parses the PEM certificate text and checks it against the live CA.
func (l drawnLive) signedByCA(text string) (*x509.Certificate, error) {
	parse := func(text string) (*x509.Certificate, error) {
		block, _ := pem.Decode([]byte(text))
		if block == nil {
			return nil, fmt.Errorf("no PEM block in %q", text)
		}
		return x509.ParseCertificate(block.Bytes)
	}
	ca, err := parse(l.ca)
	if err != nil {
		return nil, err
	}
	cert, err := parse(text)
	if err != nil {
		return nil, err
	}
	return cert, cert.CheckSignatureFrom(ca)
}

// secretKey is the drawn line of app.ini.
func (l drawnLive) secretKey() string { return strings.Split(l.appIni, "\n")[0] }

// The install of a chart that draws a Secret and reads it back with lookup afterwards (its
// pods carrying a checksum of it) applies what the next plan renders: that plan is empty, and
// an unrelated change keeps the Secret and the checksum.
func TestAccRelease_lookupOrGenerateInstallPlansEmpty(t *testing.T) {
	e := testAccRelease(t)
	config := func(message string) string {
		return e.fixtureRelease("lkp", "drawn", fmt.Sprintf(`  set = { message = %q }`, message))
	}
	var installed drawnLive
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			// The plan after each apply must be empty, which terraform-plugin-testing checks.
			{Config: config("hello"), Check: func(*terraform.State) (err error) {
				installed, err = e.readDrawn("lkp")
				if err == nil && len(installed.sessionKey) != 32 {
					err = fmt.Errorf("session key %q", installed.sessionKey)
				}
				return err
			}},
			{Config: config("changed"), Check: func(*terraform.State) error {
				live, err := e.readDrawn("lkp")
				if err != nil {
					return err
				}
				if live.sessionKey != installed.sessionKey || live.checksum != installed.checksum {
					return fmt.Errorf("an unrelated change changed the session key (%q -> %q) or its checksum (%q -> %q)",
						installed.sessionKey, live.sessionKey, installed.checksum, live.checksum)
				}
				return nil
			}},
		},
	})
}

// drawnInputs are the inputs of the fixture "drawn" that its drawn values are drawn from.
type drawnInputs struct{ password, host, level, message string }

// testDrawnValueFollows installs the fixture "drawn" with before, checks that an unrelated
// change keeps every drawn value, then applies after with the checks of the last step.
func testDrawnValueFollows(t *testing.T, before, after drawnInputs, last resource.TestStep, check func(before, after drawnLive) error) {
	e := testAccRelease(t)
	config := func(in drawnInputs) string {
		return e.fixtureRelease("drw", "drawn", fmt.Sprintf(`  set = { host = %q, level = %q, message = %q, "session.enabled" = false }
  set_sensitive = { password = %q }`, in.host, in.level, in.message, in.password))
	}
	var installed drawnLive
	read := func(check func(live drawnLive) error) resource.TestCheckFunc {
		return func(*terraform.State) error {
			live, err := e.readDrawn("drw")
			if err != nil {
				return err
			}
			return check(live)
		}
	}
	unrelated := before
	unrelated.message = "changed"
	after.message = unrelated.message
	last.Config = config(after)
	last.Check = read(func(live drawnLive) error { return check(installed, live) })
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			// The plan after each apply must be empty, which terraform-plugin-testing checks.
			{Config: config(before), Check: read(func(live drawnLive) error {
				installed = live
				if !live.passwordVerifies(before.password) {
					return fmt.Errorf("htpasswd %q does not verify the password", live.htpasswd)
				}
				if cert, err := live.certificate(); err != nil || cert.Subject.CommonName != before.host {
					return fmt.Errorf("certificate %v: %v", cert.Subject, err)
				}
				return nil
			})},
			{
				// An unrelated change changes only its own line and keeps every drawn value.
				Config: config(unrelated),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					expectManifestChanges("gitlabk8s_release.drw", map[string]*manifestLines{
						"ConfigMap/drw-config": {removed: []string{`message: hello`}, added: []string{`message: changed`}},
					}),
				}},
				Check: read(func(live drawnLive) error {
					for _, pair := range [][3]string{
						{"htpasswd", installed.htpasswd, live.htpasswd}, {"CA", installed.ca, live.ca}, {"certificate", installed.cert, live.cert},
						{"key", installed.key, live.key}, {"app.ini", installed.appIni, live.appIni},
					} {
						if pair[1] != pair[2] {
							return fmt.Errorf("an unrelated change changed the %s:\n%s\n->\n%s", pair[0], pair[1], pair[2])
						}
					}
					return nil
				}),
			},
			last,
		},
	})
}

var drawnDefaults = drawnInputs{password: "first-password", host: "a.example.test", level: "info", message: "hello"}

// A rotated password passed to htpasswd rotates: the live file verifies the new one and no
// longer the old one.
func TestAccRelease_rotatedPasswordRotates(t *testing.T) {
	after := drawnDefaults
	after.password = "second-password"
	testDrawnValueFollows(t, drawnDefaults, after, resource.TestStep{
		ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
			plancheck.ExpectUnknownValue("gitlabk8s_release.drw", tfjsonpathManifest("Secret/drw-auth")),
			// The certificates of another template are not generated anew with the hash.
			plancheck.ExpectKnownValue("gitlabk8s_release.drw", tfjsonpathManifest("Secret/drw-tls"), knownStringContaining("tls.crt: (sensitive value")),
		}},
	}, func(before, after drawnLive) error {
		if !after.passwordVerifies("second-password") || after.passwordVerifies("first-password") {
			return fmt.Errorf("the live htpasswd %q does not verify the rotated password, or still verifies the old one", after.htpasswd)
		}
		if before.appIni != after.appIni {
			return fmt.Errorf("app.ini changed with the password")
		}
		if before.ca != after.ca || before.cert != after.cert || before.metricsCert != after.metricsCert {
			return fmt.Errorf("the CA or a certificate of another template changed with the password")
		}
		return nil
	})
}

// A changed host reaches the live certificate, signed by the CA beside it.
func TestAccRelease_certificateFollowsItsHost(t *testing.T) {
	after := drawnDefaults
	after.host = "b.example.test"
	testDrawnValueFollows(t, drawnDefaults, after, resource.TestStep{}, func(before, after drawnLive) error {
		cert, err := after.certificate()
		if err != nil {
			return err
		}
		if cert.Subject.CommonName != "b.example.test" {
			return fmt.Errorf("the live certificate names %s, not the new host", cert.Subject.CommonName)
		}
		// The CA is drawn anew with the certificate, so the other certificate it signs is too.
		if _, err := after.signedByCA(after.metricsCert); err != nil || after.metricsCert == before.metricsCert {
			return fmt.Errorf("the metrics certificate does not verify against the new CA (%v), or was kept", err)
		}
		if !after.passwordVerifies("first-password") || before.appIni != after.appIni {
			return fmt.Errorf("the htpasswd or app.ini changed with the host")
		}
		return nil
	})
}

// A changed setting reaches the file, and the key drawn beside it stays; the plan shows the
// change, since the apply draws the key alike.
func TestAccRelease_settingBesideADrawnKeyIsApplied(t *testing.T) {
	after := drawnDefaults
	after.level = "debug"
	testDrawnValueFollows(t, drawnDefaults, after, resource.TestStep{
		ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
			plancheck.ExpectKnownValue("gitlabk8s_release.drw", tfjsonpathManifest("ConfigMap/drw-config"), knownStringContaining("log_level = debug")),
		}},
	}, func(before, after drawnLive) error {
		if !strings.Contains(after.appIni, "log_level = debug") {
			return fmt.Errorf("the live file says:\n%s", after.appIni)
		}
		if before.secretKey() != after.secretKey() {
			return fmt.Errorf("the drawn key changed with the setting beside it: %s -> %s", before.secretKey(), after.secretKey())
		}
		return nil
	})
}

// tokenChart draws its token when none is given, as nextcloud's metrics token and jenkins'
// admin password (without its lookup) do, and draws nothing else.
var tokenChart = map[string]string{
	"Chart.yaml":  "apiVersion: v2\nname: token\nversion: 0.1.0\n",
	"values.yaml": "token: \"\"\n",
	"templates/secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ .Release.Name }}-token\n" +
		"stringData:\n  token: {{ .Values.token | default (randAlphaNum 16) | quote }}\n",
}

// A token given through set_sensitive where the chart draws a default, then left out: the plan
// shows the Secret change and the apply draws the default, as Helm does, instead of keeping the
// former input while the plan says nothing changed. Then it stays.
func TestAccRelease_inputLeftOutForADrawnDefaultIsDrawnAnew(t *testing.T) {
	e := testAccRelease(t)
	dir := writeChart(t, "token", tokenChart)
	const chosen = "chosen-token-value"
	liveToken := func() (string, error) {
		s, err := e.kube.CoreV1().Secrets(e.namespace).Get(context.Background(), "tok-token", metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		return string(s.Data["token"]), nil
	}
	var drawn string
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: e.chartRelease("tok", dir, fmt.Sprintf("  set_sensitive = { token = %q }", chosen)),
				Check: func(*terraform.State) error {
					if got, err := liveToken(); err != nil || got != chosen {
						return fmt.Errorf("live token %q (%v), want the one given", got, err)
					}
					return nil
				},
			},
			{
				Config: e.chartRelease("tok", dir, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					secretManifestChanges{address: "gitlabk8s_release.tok", key: "Secret/tok-token", hidden: chosen},
				}},
				Check: func(*terraform.State) error {
					got, err := liveToken()
					if err != nil || got == chosen || len(got) != 16 {
						return fmt.Errorf("live token %q (%v), want the chart's default drawn anew", got, err)
					}
					drawn = got
					return nil
				},
			},
			{
				Config:           e.chartRelease("tok", dir, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check: func(*terraform.State) error {
					if got, err := liveToken(); err != nil || got != drawn {
						return fmt.Errorf("live token %q (%v), want the drawn %q kept", got, err, drawn)
					}
					return nil
				},
			},
		},
	})
}

// secretManifestChanges checks that the plan changes the manifest key of address, and shows
// hidden in neither its old nor its new text.
type secretManifestChanges struct{ address, key, hidden string }

func (c secretManifestChanges) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Address != c.address {
			continue
		}
		before, after := planManifestsOf(rc.Change.Before, nil)[c.key], planManifestsOf(rc.Change.After, rc.Change.AfterUnknown)[c.key]
		switch {
		case before == "" || after == "":
			resp.Error = fmt.Errorf("%s: no manifest %s before or after:\n%q\n%q", c.address, c.key, before, after)
		case before == after:
			resp.Error = fmt.Errorf("%s: the plan does not change %s:\n%s", c.address, c.key, after)
		case strings.Contains(before+after, c.hidden):
			resp.Error = fmt.Errorf("%s: %s shows %q", c.address, c.key, c.hidden)
		}
		return
	}
	resp.Error = fmt.Errorf("no change of %s in the plan", c.address)
}

// A release helm installed draws with randomness of its own, and Helm records the chart and the
// values it rendered: after its import, the first plan traces them as it traces its own
// rendering, so an unchanged password keeps its hash, and a rotated one rotates (the plan shows
// the Secret known after apply) while the CA of another template stays; the plan after that
// apply is empty.
func TestAccRelease_importOfAHelmReleaseRotatesARotatedPassword(t *testing.T) {
	e := testAccRelease(t)
	e.helmCLI(t)("upgrade", "--install", "--wait", "drw", chartserver.FixtureChart("drawn"), "--set", "session.enabled=false", "--set", "password=helm-password")
	installed, err := e.readDrawn("drw")
	if err != nil {
		t.Fatal(err)
	}
	config := func(password string) string {
		return "\nprovider \"gitlabk8s\" {}\n" + e.fixtureRelease("drw", "drawn", fmt.Sprintf(`  set = { "session.enabled" = false }
  set_sensitive = { password = %q }`, password))
	}
	cli := newTerraformCLI(t, suiteCLI(t))
	cli.writeConfig(config("helm-password"))
	cli.mustRun("import", "gitlabk8s_release.drw", e.namespace+"/drw")
	if out := cli.mustRun("plan"); strings.Contains(out, `"Secret/drw-auth"`) || strings.Contains(out, `"Secret/drw-tls"`) {
		t.Errorf("the plan with the password helm was given draws anew:\n%s", out)
	}
	cli.writeConfig(config("rotated-password"))
	out := strings.Join(strings.Fields(cli.mustRun("apply", "-auto-approve")), " ")
	if !strings.Contains(out, `~ "Secret/drw-auth" = <<-EOT`) || strings.Contains(out, `"Secret/drw-tls"`) {
		t.Errorf("the apply of the rotated password does not show the htpasswd drawn anew alone:\n%s", out)
	}
	live, err := e.readDrawn("drw")
	if err != nil {
		t.Fatal(err)
	}
	if !live.passwordVerifies("rotated-password") || live.passwordVerifies("helm-password") {
		t.Errorf("the live htpasswd %q does not verify the rotated password, or still verifies helm's", live.htpasswd)
	}
	if live.ca != installed.ca || live.cert != installed.cert {
		t.Error("the CA or certificate helm drew changed with the password")
	}
	if out := cli.mustRun("plan", "-detailed-exitcode"); !strings.Contains(out, "No changes.") {
		t.Errorf("the plan after the apply is not empty:\n%s", out)
	}
}

// Certificates a chart generates once and reads back with lookup (certs-lookup: elasticsearch's
// transport certificate, and a CA read back with buildCustomCert to sign a certificate drawn at
// every rendering) are installed generated, not as what the plan rendered in their place: each
// verifies against its CA. The plan after the install is empty, and a change elsewhere keeps
// every one.
func TestAccRelease_certificateLookedUpOrGeneratedIsInstalledGenerated(t *testing.T) {
	e := testAccRelease(t)
	dir := chartserver.FixtureChart("certs-lookup")
	// live reads Secret name's certificate and verifies it against the CA at caKey of Secret
	// caSecret, returning the certificate's text.
	live := func(name, caSecret, caKey string) (string, error) {
		read := func(secret, key string) (*x509.Certificate, []byte, error) {
			s, err := e.kube.CoreV1().Secrets(e.namespace).Get(context.Background(), secret, metav1.GetOptions{})
			if err != nil {
				return nil, nil, err
			}
			block, _ := pem.Decode(s.Data[key])
			if block == nil {
				return nil, nil, fmt.Errorf("the live Secret %s holds no PEM block at %s: %q", secret, key, s.Data[key])
			}
			cert, err := x509.ParseCertificate(block.Bytes)
			return cert, s.Data[key], err
		}
		cert, text, err := read(name, "tls.crt")
		if err != nil {
			return "", err
		}
		ca, _, err := read(caSecret, caKey)
		if err != nil {
			return "", err
		}
		if err := cert.CheckSignatureFrom(ca); err != nil {
			return "", fmt.Errorf("Secret %s's certificate does not verify against the CA of %s: %w", name, caSecret, err)
		}
		return string(text), nil
	}
	type certs struct{ transport, ca, api string }
	liveCerts := func() (c certs, err error) {
		if c.transport, err = live("crt-certs", "crt-certs", "ca.crt"); err != nil {
			return c, err
		}
		if c.ca, err = live("crt-ca", "crt-ca", "tls.crt"); err != nil {
			return c, err
		}
		c.api, err = live("crt-api-tls", "crt-ca", "tls.crt")
		return c, err
	}
	var installed certs
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: e.chartRelease("crt", dir, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectUnknownValue("gitlabk8s_release.crt", tfjsonpathManifest("Secret/crt-certs")),
					plancheck.ExpectUnknownValue("gitlabk8s_release.crt", tfjsonpathManifest("Secret/crt-api-tls")),
				}},
				Check: func(*terraform.State) (err error) {
					installed, err = liveCerts()
					return err
				},
			},
			{
				Config:           e.chartRelease("crt", dir, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				Config: e.chartRelease("crt", dir, `  set = { level = "debug" }`),
				Check: func(*terraform.State) error {
					if got, err := liveCerts(); err != nil || got != installed {
						return fmt.Errorf("a live certificate changed with another setting, or no longer verifies (%v)", err)
					}
					return nil
				},
			},
		},
	})
}
