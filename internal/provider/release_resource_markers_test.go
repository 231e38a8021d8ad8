package provider

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chartserver"
)

func markersConfig(namespace, password, admin string) string {
	release := func(name string) string {
		return fmt.Sprintf(`
resource "gitlabk8s_release" %q {
  name      = %q
  namespace = %q
  chart     = %q
  wait      = false
  set_sensitive = {
    "db.password"    = %q
    "admin.password" = %q
  }
}
`, name, name, namespace, chartserver.FixtureChart("secret-forms"), password, admin)
	}
	return "provider \"gitlabk8s\" {}\n" + release("web") + release("other")
}

var hmacMarker = regexp.MustCompile(`\(sensitive value hmac:[0-9a-f]{12}\)`)

// stateManifest returns one manifest of a release in the CLI's state.
func stateManifest(t *testing.T, cli *terraformCLI, release, key string) string {
	t.Helper()
	var doc struct {
		Values struct {
			RootModule struct {
				Resources []struct {
					Name   string `json:"name"`
					Values struct {
						Manifests map[string]string `json:"manifests"`
					} `json:"values"`
				} `json:"resources"`
			} `json:"root_module"`
		} `json:"values"`
	}
	if err := json.Unmarshal([]byte(cli.mustRun("show", "-json")), &doc); err != nil {
		t.Fatal(err)
	}
	for _, r := range doc.Values.RootModule.Resources {
		if r.Name == release {
			return r.Values.Manifests[key]
		}
	}
	t.Fatalf("the state holds no release %s", release)
	return ""
}

// markerOn returns the marker on the line of text whose field is field.
func markerOn(t *testing.T, text, field string) string {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), field+": ") {
			if m := hmacMarker.FindString(line); m != "" {
				return m
			}
		}
	}
	t.Fatalf("no keyed marker for %s in:\n%s", field, text)
	return ""
}

// TestAccRelease_markersAreKeyed checks that a Secret value shows as an HMAC keyed per release:
// the same value shows the same marker in every plan and a changed one a new marker, the same
// value in two releases shows two markers, and no marker is the unkeyed SHA-256 of the value.
// It runs with terraform and with tofu.
func TestAccRelease_markersAreKeyed(t *testing.T) {
	forEachCLI(t, testMarkersAreKeyed)
}

func testMarkersAreKeyed(t *testing.T, bin cliBinary) {
	e := testAccRelease(t)
	suffix := fmt.Sprintf("%08x", rand.Uint32())
	password, changed, admin := "first-Passw0rd-"+suffix, "second-Passw0rd-"+suffix, "Adm1n-"+suffix
	cli := newTerraformCLI(t, bin)
	cli.writeConfig(markersConfig(e.namespace, password, admin))
	cli.mustRun("apply", "-auto-approve")
	// The first plan of a release, before it has a key, shows markers without a hash; a plan
	// that does not refresh keeps them, as the objects have not changed since the apply.
	if out := cli.mustRun("plan", "-refresh=false", "-detailed-exitcode"); !strings.Contains(out, "No changes.") {
		t.Errorf("plan -refresh=false after the first apply is not empty:\n%s", out)
	}
	// The refresh writes them with the key the apply drew.
	cli.mustRun("apply", "-refresh-only", "-auto-approve")

	secret := stateManifest(t, cli, "web", "Secret/web-forms")
	adminMarker, passwordMarker := markerOn(t, secret, "admin-password"), markerOn(t, secret, "password")
	for value, marker := range map[string]string{admin: adminMarker, password: passwordMarker} {
		sum := sha256.Sum256([]byte(value))
		if strings.Contains(marker, hex.EncodeToString(sum[:])[:12]) {
			t.Errorf("marker %s is the unkeyed SHA-256 of its value", marker)
		}
	}
	if other := markerOn(t, stateManifest(t, cli, "other", "Secret/other-forms"), "admin-password"); other == adminMarker {
		t.Errorf("the same value shows the same marker %s in two releases: the markers are not keyed per release", other)
	}
	for _, args := range [][]string{{"plan", "-detailed-exitcode"}, {"plan", "-refresh=false", "-detailed-exitcode"}} {
		if out := cli.mustRun(args...); !strings.Contains(out, "No changes.") {
			t.Errorf("%s after the apply is not empty:\n%s", strings.Join(args, " "), out)
		}
	}
	if again := markerOn(t, stateManifest(t, cli, "web", "Secret/web-forms"), "admin-password"); again != adminMarker {
		t.Errorf("the marker of an unchanged value changed across plans: %s, then %s", adminMarker, again)
	}

	// A changed password shows a changed marker; the unchanged admin password keeps its own.
	cli.writeConfig(markersConfig(e.namespace, changed, admin))
	plan := cli.mustRun("plan", "-out=tfplan")
	assertNoPasswordForm(t, "the plan of the changed password", plan, password, changed)
	var removed, added bool
	for _, line := range strings.Split(plan, "\n") {
		trimmed := strings.TrimSpace(line)
		sign, field := "", trimmed
		if strings.HasPrefix(trimmed, "- ") || strings.HasPrefix(trimmed, "+ ") {
			sign, field = trimmed[:1], strings.TrimSpace(trimmed[1:])
		}
		switch {
		case sign == "-" && field == "password: "+passwordMarker:
			removed = true
		case sign == "+" && strings.HasPrefix(field, "password: (sensitive value hmac:") && !strings.Contains(field, passwordMarker):
			added = true
		case sign != "" && strings.HasPrefix(field, "admin-password:"):
			t.Errorf("the unchanged admin password shows as changed: %q", line)
		}
	}
	if !removed || !added {
		t.Errorf("the plan does not show the password's marker %s replaced by another keyed marker:\n%s", passwordMarker, plan)
	}
	if !strings.Contains(plan, "admin-password: "+adminMarker) {
		t.Errorf("the plan does not show the unchanged admin password's marker %s:\n%s", adminMarker, plan)
	}
	cli.mustRun("apply", "tfplan")
	if out := cli.mustRun("plan", "-detailed-exitcode"); !strings.Contains(out, "No changes.") {
		t.Errorf("the plan after applying the changed password is not empty:\n%s", out)
	}
}

// TestAccRelease_uninstalledOutsideIsInstalledAgain checks that a release uninstalled outside
// Terraform (helm uninstall, or its namespace deleted by hand) after its markers were keyed is
// installed again by the next apply: the refresh drops it from the state, and the plan of its
// creation shows the same markers as the plan Terraform makes again during the apply, never
// the key of the release that is gone. It runs with terraform and with tofu.
func TestAccRelease_uninstalledOutsideIsInstalledAgain(t *testing.T) {
	forEachCLI(t, testUninstalledOutsideIsInstalledAgain)
}

func testUninstalledOutsideIsInstalledAgain(t *testing.T, bin cliBinary) {
	e := testAccRelease(t)
	suffix := fmt.Sprintf("%08x", rand.Uint32())
	password, admin := "first-Passw0rd-"+suffix, "Adm1n-"+suffix
	cli := newTerraformCLI(t, bin)
	cli.writeConfig(markersConfig(e.namespace, password, admin))
	cli.mustRun("apply", "-auto-approve")
	cli.mustRun("apply", "-refresh-only", "-auto-approve")
	markerOn(t, stateManifest(t, cli, "web", "Secret/web-forms"), "password")

	e.helmCLI(t)("uninstall", "web")
	out := cli.mustRun("apply", "-auto-approve")
	assertNoPasswordForm(t, "the apply that installs the release again", out, password, admin)
	if !strings.Contains(out, "gitlabk8s_release.web will be created") {
		t.Errorf("the apply after helm uninstall does not create the release again:\n%s", out)
	}
	if got := e.helmRevisions(t, "web"); len(got) != 1 {
		t.Errorf("helm history of web after the apply = %v, want one revision", got)
	}
	cli.mustRun("apply", "-refresh-only", "-auto-approve")
	if out := cli.mustRun("plan", "-detailed-exitcode"); !strings.Contains(out, "No changes.") {
		t.Errorf("the plan after installing the release again is not empty:\n%s", out)
	}
}
