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
)

// drawnLive is what the cluster holds of a release of the fixture "drawn": each value the
// chart draws, and what it is drawn from.
type drawnLive struct {
	htpasswd, ca, cert, key, appIni, sessionKey, checksum string
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
	session, err := e.kube.CoreV1().Secrets(e.namespace).Get(ctx, name+"-session", metav1.GetOptions{})
	if err != nil {
		return live, err
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
		appIni: config.Data["app.ini"], sessionKey: string(session.Data["session-key"]),
		checksum: deployment.Spec.Template.Annotations["checksum/session"],
	}, nil
}

// passwordVerifies says whether the live htpasswd verifies password.
func (l drawnLive) passwordVerifies(password string) bool {
	_, hash, _ := strings.Cut(l.htpasswd, ":")
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) == nil
}

// certificate parses the live certificate and checks it against the live CA.
func (l drawnLive) certificate() (*x509.Certificate, error) {
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
	cert, err := parse(l.cert)
	if err != nil {
		return nil, err
	}
	return cert, cert.CheckSignatureFrom(ca)
}

// secretKey is the drawn line of app.ini.
func (l drawnLive) secretKey() string { return strings.Split(l.appIni, "\n")[0] }

// Values a chart draws follow what they are drawn from: a rotated password reaches the live
// htpasswd, a changed host the live certificate, a changed setting the file that also holds a
// drawn key; an unrelated change keeps every drawn value, and the plan after the install of a
// chart that reads a generated Secret back with lookup is empty.
func TestAccRelease_drawnValuesFollowTheirInputs(t *testing.T) {
	e := testAccRelease(t)
	const address = "gitlabk8s_release.drw"
	config := func(password, host, level, message string) string {
		return e.fixtureRelease("drw", "drawn", fmt.Sprintf(`  set = { host = %q, level = %q, message = %q }
  set_sensitive = { password = %q }`, host, level, message, password))
	}
	var installed drawnLive
	// each reads the live values and checks them against what came before.
	each := func(check func(before, after drawnLive) error) resource.TestCheckFunc {
		return func(*terraform.State) error {
			live, err := e.readDrawn("drw")
			if err != nil {
				return err
			}
			if err := check(installed, live); err != nil {
				return err
			}
			installed = live
			return nil
		}
	}
	unchanged := func(what string, before, after string) error {
		if before != after {
			return fmt.Errorf("%s changed:\n%s\n->\n%s", what, before, after)
		}
		return nil
	}
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				// The install applies what the next plan renders: after it, the plan is empty
				// (checked after every step), the checksum of the looked-up Secret included.
				Config: config("first-password", "a.example.test", "info", "hello"),
				Check: each(func(_, live drawnLive) error {
					if !live.passwordVerifies("first-password") {
						return fmt.Errorf("htpasswd %q does not verify the password", live.htpasswd)
					}
					if cert, err := live.certificate(); err != nil || cert.Subject.CommonName != "a.example.test" {
						return fmt.Errorf("certificate %v: %v", cert.Subject, err)
					}
					return nil
				}),
			},
			{
				// An unrelated change changes only its own line and keeps every drawn value.
				Config: config("first-password", "a.example.test", "info", "changed"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					expectManifestChanges(address, map[string]*manifestLines{
						"ConfigMap/drw-config": {removed: []string{`message: hello`}, added: []string{`message: changed`}},
					}),
				}},
				Check: each(func(before, after drawnLive) error {
					for _, pair := range [][3]string{
						{"htpasswd", before.htpasswd, after.htpasswd}, {"CA", before.ca, after.ca}, {"certificate", before.cert, after.cert},
						{"key", before.key, after.key}, {"app.ini", before.appIni, after.appIni}, {"session key", before.sessionKey, after.sessionKey},
						{"checksum", before.checksum, after.checksum},
					} {
						if err := unchanged(pair[0], pair[1], pair[2]); err != nil {
							return err
						}
					}
					return nil
				}),
			},
			{
				// A rotated password rotates: the new one verifies, the old one no longer does.
				Config: config("second-password", "a.example.test", "info", "changed"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectUnknownValue(address, tfjsonpathManifest("Secret/drw-auth")),
				}},
				Check: each(func(before, after drawnLive) error {
					if !after.passwordVerifies("second-password") || after.passwordVerifies("first-password") {
						return fmt.Errorf("the live htpasswd %q does not verify the rotated password, or still verifies the old one", after.htpasswd)
					}
					return unchanged("app.ini", before.appIni, after.appIni)
				}),
			},
			{
				// A changed host reaches the certificate, signed by the CA beside it.
				Config: config("second-password", "b.example.test", "info", "changed"),
				Check: each(func(before, after drawnLive) error {
					cert, err := after.certificate()
					if err != nil {
						return err
					}
					if cert.Subject.CommonName != "b.example.test" {
						return fmt.Errorf("the live certificate names %s, not the new host", cert.Subject.CommonName)
					}
					if !after.passwordVerifies("second-password") {
						return fmt.Errorf("the htpasswd changed with the host")
					}
					return unchanged("session key", before.sessionKey, after.sessionKey)
				}),
			},
			{
				// A changed setting reaches the file, and the key drawn beside it stays; the plan
				// shows the change, since the apply draws the key alike.
				Config: config("second-password", "b.example.test", "debug", "changed"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(address, tfjsonpathManifest("ConfigMap/drw-config"), knownStringContaining("log_level = debug")),
				}},
				Check: each(func(before, after drawnLive) error {
					if !strings.Contains(after.appIni, "log_level = debug") {
						return fmt.Errorf("the live file says:\n%s", after.appIni)
					}
					return unchanged("the drawn key", before.secretKey(), after.secretKey())
				}),
			},
		},
	})
}
