package provider

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chartserver"
)

// importedToken is the secret-forms chart's apiToken in importedSecretFormsConfig, given with
// set: the chart also writes it where no password is, which an imported release hides until
// the first change.
const importedToken = "tok-1234-abcd"

// importedSecretFormsConfig is a release of the secret-forms chart with a set_sensitive
// password, and with set a host, which the chart puts in the same strings, and a token.
func importedSecretFormsConfig(namespace, password, host string) string {
	return "\nprovider \"gitlabk8s\" {}\n" + releaseConfig("web", namespace, chartserver.FixtureChart("secret-forms"), fmt.Sprintf(`  set = {
    "db.host" = %q
    apiToken  = %q
  }
  set_sensitive = {
    "db.password" = %q
  }`, host, importedToken, password))
}

// stateManifests returns the manifests of the release in showJSON (terraform show -json of
// the state), as JSON.
func stateManifests(t *testing.T, showJSON string) string {
	t.Helper()
	var state struct {
		Values struct {
			RootModule struct {
				Resources []struct {
					Address string         `json:"address"`
					Values  map[string]any `json:"values"`
				} `json:"resources"`
			} `json:"root_module"`
		} `json:"values"`
	}
	if err := json.Unmarshal([]byte(showJSON), &state); err != nil {
		t.Fatal(err)
	}
	for _, r := range state.Values.RootModule.Resources {
		if r.Address == webAddress {
			out, err := json.Marshal(r.Values["manifests"])
			if err != nil {
				t.Fatal(err)
			}
			return string(out)
		}
	}
	t.Fatalf("terraform show -json holds no %s: %s", webAddress, showJSON)
	return ""
}

// planKeepsManifests fails unless the plan in planJSON (terraform show -json) leaves the
// manifests and the revision of the release as they are.
func planKeepsManifests(t *testing.T, planJSON string) {
	t.Helper()
	var plan struct {
		ResourceChanges []struct {
			Change struct {
				Before, After map[string]any
			} `json:"change"`
		} `json:"resource_changes"`
	}
	if err := json.Unmarshal([]byte(planJSON), &plan); err != nil {
		t.Fatal(err)
	}
	for _, rc := range plan.ResourceChanges {
		for _, attr := range []string{"manifests", "revision"} {
			if !reflect.DeepEqual(rc.Change.Before[attr], rc.Change.After[attr]) {
				t.Errorf("the first plan after the import changes %s: an unchanged release would be upgraded", attr)
			}
		}
	}
}

// An imported release is read without its configuration, so the provider does not know which
// of its values are sensitive: its manifests hide whatever the chart derives from any value it
// was given. No form of the set_sensitive password shows in the import's state or in the
// first plan, which upgrades nothing; a change of a value that is not sensitive then plans and
// applies as ever, still showing no form of it. Run with `terraform import` and with an import
// block, with terraform and tofu.
func TestAccRelease_importShowsNoFormOfASensitiveValue(t *testing.T) {
	forEachCLI(t, func(t *testing.T, bin cliBinary) {
		e := testAccRelease(t)
		password := `Tr0ub&dor 3/c+rr%ct#h@rse:` + fmt.Sprintf("%08x", rand.Uint32())
		cli := newTerraformCLI(t, bin)
		config := importedSecretFormsConfig(e.namespace, password, "db")
		cli.writeConfig(config)
		cli.mustRun("apply", "-auto-approve")

		importIs := func(how string, importRun func()) {
			t.Helper()
			cli.mustRun("state", "rm", webAddress)
			importRun()
			showState := cli.mustRun("show", "-json")
			stateJSON, n := nonSensitiveValues(t, showState)
			if n == 0 || !strings.Contains(stateJSON, "dsn: (sensitive value") {
				t.Fatalf("the state after %s holds no manifests of the release: %s", how, stateJSON)
			}
			if strings.Contains(stateManifests(t, showState), importedToken) {
				t.Errorf("the manifests after %s show the token given with set: an imported release hides every value it was given until a change", how)
			}
			assertNoPasswordForm(t, "terraform show -json (state) after "+how, stateJSON, password)
			cli.writeConfig(config)
			plan := cli.mustRun("plan", "-out=tfplan")
			assertNoPasswordForm(t, "the first plan after "+how, plan, password)
			showPlan := cli.mustRun("show", "-json", "tfplan")
			planKeepsManifests(t, showPlan)
			planJSON, _ := nonSensitiveValues(t, showPlan)
			assertNoPasswordForm(t, "terraform show -json tfplan after "+how, planJSON, password)
			assertNoPasswordForm(t, "terraform apply after "+how, cli.mustRun("apply", "tfplan"), password)
			if out := cli.mustRun("plan", "-detailed-exitcode"); !strings.Contains(out, "No changes.") {
				t.Errorf("the plan after applying the configuration to the release of %s is not empty:\n%s", how, out)
			}
		}
		importIs("terraform import", func() {
			assertNoPasswordForm(t, "terraform import", cli.mustRun("import", webAddress, e.namespace+"/web"), password)
		})
		importIs("an import block", func() {
			cli.writeConfig(config + fmt.Sprintf("\nimport {\n  to = %s\n  id = \"%s/web\"\n}\n", webAddress, e.namespace))
			plan := cli.mustRun("plan", "-out=tfplan")
			assertNoPasswordForm(t, "the plan of the import block", plan, password)
			planJSON, _ := nonSensitiveValues(t, cli.mustRun("show", "-json", "tfplan"))
			assertNoPasswordForm(t, "terraform show -json tfplan of the import block", planJSON, password)
			assertNoPasswordForm(t, "terraform apply of the import block", cli.mustRun("apply", "tfplan"), password)
		})
		if got := e.helmRevisions(t, "web"); len(got) != 1 {
			t.Errorf("helm history after the imports = %v, want one revision: nothing changed", got)
		}

		// A change of a value that is not sensitive upgrades the release; no form shows.
		cli.writeConfig(importedSecretFormsConfig(e.namespace, password, "db2"))
		plan := cli.mustRun("plan", "-out=tfplan")
		assertNoPasswordForm(t, "the plan of the changed host", plan, password)
		if !strings.Contains(plan, "update in-place") || !strings.Contains(plan, `"ConfigMap/web-forms"`) {
			t.Errorf("the plan of a changed host does not show ConfigMap/web-forms changing:\n%s", plan)
		}
		planJSON, _ := nonSensitiveValues(t, cli.mustRun("show", "-json", "tfplan"))
		assertNoPasswordForm(t, "terraform show -json tfplan of the changed host", planJSON, password)
		if !strings.Contains(planJSON, importedToken) {
			t.Errorf("the plan of the first change does not write the manifests as the configuration redacts them (the token shown): %s", planJSON)
		}
		assertNoPasswordForm(t, "terraform apply of the changed host", cli.mustRun("apply", "tfplan"), password)
		cm, err := e.kube.CoreV1().ConfigMaps(e.namespace).Get(t.Context(), "web-forms", metav1.GetOptions{})
		if err != nil || !strings.HasSuffix(cm.Data["dsn"], "@db2/app") {
			t.Fatalf("ConfigMap web-forms dsn = %q (err %v), want the host db2", cm.Data["dsn"], err)
		}
		stateJSON, _ := nonSensitiveValues(t, cli.mustRun("show", "-json"))
		assertNoPasswordForm(t, "terraform show -json (state) after the change", stateJSON, password)
		if out := cli.mustRun("plan", "-detailed-exitcode"); !strings.Contains(out, "No changes.") {
			t.Errorf("the plan after applying the changed host is not empty:\n%s", out)
		}
		assertNoPasswordForm(t, "the provider's trace log", cli.providerLog(), password)
	})
}

// A release installed with helm, as one migrating to the provider has, is imported with no
// form of its password showing in the import's state or the first plan, which upgrades
// nothing; the plan after that plan's apply is empty.
func TestAccRelease_importOfAHelmReleaseShowsNoFormOfASensitiveValue(t *testing.T) {
	e := testAccRelease(t)
	password := `Tr0ub&dor 3/c+rr%ct#h@rse:` + fmt.Sprintf("%08x", rand.Uint32())
	e.helmCLI(t)("upgrade", "--install", "--wait", "web", chartserver.FixtureChart("secret-forms"),
		"--set", "db.host=db", "--set", "apiToken="+importedToken, "--set-string", "db.password="+password)
	cli := newTerraformCLI(t, suiteCLI(t))
	cli.writeConfig(importedSecretFormsConfig(e.namespace, password, "db"))
	assertNoPasswordForm(t, "terraform import", cli.mustRun("import", webAddress, e.namespace+"/web"), password)
	showState := cli.mustRun("show", "-json")
	stateJSON, _ := nonSensitiveValues(t, showState)
	assertNoPasswordForm(t, "terraform show -json (state) after the import", stateJSON, password)
	if manifests := stateManifests(t, showState); !strings.Contains(manifests, "dsn: (sensitive value") || strings.Contains(manifests, importedToken) {
		t.Errorf("the imported manifests do not hide every value the release was given: %s", manifests)
	}
	plan := cli.mustRun("plan", "-out=tfplan")
	assertNoPasswordForm(t, "the first plan after the import", plan, password)
	showPlan := cli.mustRun("show", "-json", "tfplan")
	planKeepsManifests(t, showPlan)
	planJSON, _ := nonSensitiveValues(t, showPlan)
	assertNoPasswordForm(t, "terraform show -json tfplan after the import", planJSON, password)
	cli.mustRun("apply", "tfplan")
	if out := cli.mustRun("plan", "-detailed-exitcode"); !strings.Contains(out, "No changes.") {
		t.Errorf("the plan after applying the configuration to the imported release is not empty:\n%s", out)
	}
	if got := e.helmRevisions(t, "web"); len(got) != 1 {
		t.Errorf("helm history = %v, want the one revision helm installed", got)
	}
	assertNoPasswordForm(t, "the provider's trace log", cli.providerLog(), password)
}

// A recorded chart whose templates are literal text (as a release applied by an earlier
// version of the provider has it) cannot be rendered again to find what it derives: the
// import hides every string of its objects but their names, so no form of a value it was
// given shows (the token as it is, upper-cased, in a base64 basic-auth pair), warns, the
// refresh of the first plan keeps them hidden, and that plan upgrades nothing.
func TestAccRelease_importOfALiteralChartWarnsAndUpgradesNothing(t *testing.T) {
	e := testAccRelease(t)
	forms := []string{importedToken, strings.ToUpper(importedToken), base64.StdEncoding.EncodeToString([]byte("app:" + importedToken))}
	dir := writeChart(t, "literal", map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: literal\nversion: 0.1.0\n",
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: literal\n  labels:\n    app: literal\ndata:\n" +
			"  token: " + forms[0] + "\n  upper: " + forms[1] + "\n  basic: " + forms[2] + "\n",
		"templates/NOTES.txt": "literal\n",
	})
	leaks := func(out string) []string {
		return slices.DeleteFunc(slices.Clone(forms), func(form string) bool { return !strings.Contains(out, form) })
	}
	e.helmCLI(t)("upgrade", "--install", "--wait", "literal", dir, "--set", "apiToken="+importedToken)
	cli := newTerraformCLI(t, suiteCLI(t))
	cli.writeConfig("\nprovider \"gitlabk8s\" {}\n" + releaseConfig("literal", e.namespace, dir, fmt.Sprintf("  set_sensitive = { apiToken = %q }", importedToken)))
	const address = "gitlabk8s_release.literal"
	if out := cli.mustRun("import", address, e.namespace+"/literal"); !strings.Contains(out, "Imported Manifests Hide Every Value") {
		t.Errorf("the import of a chart recorded as literal text does not warn:\n%s", out)
	}
	out := cli.mustRun("state", "show", address)
	if found := leaks(out); len(found) > 0 {
		t.Errorf("the imported manifests show %q of the value the release was given:\n%s", found, out)
	}
	if !strings.Contains(out, "name: literal") || !strings.Contains(out, "app: literal") {
		t.Errorf("the imported manifests hide the object's name:\n%s", out)
	}
	if out := cli.mustRun("plan", "-out=tfplan"); len(leaks(out)) > 0 {
		t.Errorf("the first plan after the import shows %q of the token:\n%s", leaks(out), out)
	}
	showPlan := cli.mustRun("show", "-json", "tfplan")
	if planJSON, _ := nonSensitiveValues(t, showPlan); len(leaks(planJSON)) > 0 {
		t.Errorf("the first plan after the import shows %q of the token (its refresh did not keep it hidden): %s", leaks(planJSON), planJSON)
	}
	planKeepsManifests(t, showPlan)
	cli.mustRun("apply", "tfplan")
	if got := e.helmRevisions(t, "literal"); len(got) != 1 {
		t.Errorf("helm history = %v, want the one revision helm installed", got)
	}
}

// Helm records a chart without its subcharts, so an umbrella chart cannot be rendered again
// from the record either: the import hides every string of its objects but their names (the
// image the chart's globals give, the value given with --set), warns naming the cause, and the
// first plan upgrades nothing.
func TestAccRelease_importOfAnUmbrellaChartHidesEveryString(t *testing.T) {
	e := testAccRelease(t)
	message := "s3cr3t-" + fmt.Sprintf("%08x", rand.Uint32())
	umbrella := chartserver.FixtureChart("zoo-umbrella")
	e.helmCLI(t)("upgrade", "--install", "--wait", "web", umbrella, "--set-string", "message="+message)
	cli := newTerraformCLI(t, suiteCLI(t))
	cli.writeConfig("\nprovider \"gitlabk8s\" {}\n" + releaseConfig("web", e.namespace, umbrella, fmt.Sprintf("  set_sensitive = { message = %q }", message)))
	if out := cli.mustRun("import", webAddress, e.namespace+"/web"); !strings.Contains(out, "Imported Manifests Hide Every Value") || !strings.Contains(out, "without its subcharts") {
		t.Errorf("the import of an umbrella chart does not warn that its subcharts are not recorded:\n%s", out)
	}
	state := cli.mustRun("state", "show", webAddress)
	for _, hidden := range []string{message, "registry.invalid/zoo/app:1.0.0"} {
		if strings.Contains(state, hidden) {
			t.Errorf("the imported manifests show %q:\n%s", hidden, state)
		}
	}
	if !strings.Contains(state, `"Deployment.apps/web"`) || !strings.Contains(state, "name: web-config") {
		t.Errorf("the imported manifests hide the objects' names:\n%s", state)
	}
	if out := cli.mustRun("plan", "-out=tfplan"); strings.Contains(out, message) {
		t.Errorf("the first plan after the import shows the message:\n%s", out)
	}
	planKeepsManifests(t, cli.mustRun("show", "-json", "tfplan"))
	cli.mustRun("apply", "tfplan")
	if got := e.helmRevisions(t, "web"); len(got) != 1 {
		t.Errorf("helm history = %v, want the one revision helm installed", got)
	}
}

// An import marks the private state; the refresh that follows reads the mark and clears it.
func TestImportedMark(t *testing.T) {
	ctx := t.Context()
	private := mapPrivate{}
	if wasImported(ctx, private) || wasImported(ctx, nil) {
		t.Fatal("a private state without the mark reads as imported")
	}
	if diags := markImported(ctx, private); diags.HasError() || !wasImported(ctx, private) {
		t.Fatalf("the mark does not read back: %v", diags)
	}
	if diags := clearImported(ctx, private); diags.HasError() || wasImported(ctx, private) || len(private) != 0 {
		t.Errorf("the cleared mark is still there: %v", private)
	}
}
