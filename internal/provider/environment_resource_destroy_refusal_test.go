package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlab"
)

// Destroy deletes only the environment's own namespace. These tests run the CLI themselves
// (the suite's CLI, see suiteCLI), because the cases need what terraform-plugin-testing cannot
// do: destroy without a refresh, the way a stop job racing another pipeline meets a namespace
// that changed since the state was written, and a state edited by hand.

// environmentCLI applies an environment with the suite's CLI and returns the CLI and the
// namespace's UID.
func environmentCLI(t *testing.T, name, namespace string) (*terraformCLI, types.UID) {
	t.Helper()
	client := adminClient(t)
	cleanupNamespace(t, client, namespace)
	cli := newTerraformCLI(t, suiteCLI(t))
	cli.writeConfig(fmt.Sprintf(`
resource "gitlabk8s_environment" "test" {
  name      = %q
  namespace = %q
}
`, name, namespace))
	cli.mustRun("apply", "-auto-approve")
	return cli, getNamespace(t, client, namespace).UID
}

// expectDestroyRefused runs destroy with args, wants it to fail with want, and the namespace
// to be there and not terminating afterwards.
func expectDestroyRefused(t *testing.T, cli *terraformCLI, client kubernetes.Interface, namespace string, want *regexp.Regexp, args ...string) {
	t.Helper()
	out, err := cli.run(append([]string{"destroy", "-auto-approve"}, args...)...)
	if err == nil {
		t.Fatalf("destroy succeeded; it must refuse to delete the namespace %s:\n%s", namespace, out)
	}
	if !want.MatchString(out) {
		t.Errorf("destroy failed without saying %s:\n%s", want, out)
	}
	expectNamespaceKept(t, client, namespace, "a refused destroy")
}

// expectNamespaceKept fails unless the namespace is there and not terminating after what.
func expectNamespaceKept(t *testing.T, client kubernetes.Interface, namespace, what string) {
	t.Helper()
	if ns := getNamespace(t, client, namespace); ns.DeletionTimestamp != nil {
		t.Fatalf("namespace %s is being deleted after %s", namespace, what)
	}
}

func TestAccEnvironment_destroyRefusesANamespaceMarkedForAnotherEnvironment(t *testing.T) {
	client := adminClient(t)
	name, namespace := envTestNames(t, "claimed")
	cli, _ := environmentCLI(t, name, namespace)
	ctx := context.Background()

	// Another environment claims the namespace: same namespace, same UID, another marker.
	setMarker := func(value string) {
		t.Helper()
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, gitlab.AnnotationEnvironment, value)
		if _, err := client.CoreV1().Namespaces().Patch(ctx, namespace, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	setMarker("review/someone-else")
	expectDestroyRefused(t, cli, client, namespace, regexp.MustCompile(`(?s)Refusing to Delete Namespace.*`+namespace+`.*ownership\s+marker`))

	// Marked as ours again, the same destroy deletes it.
	setMarker(name)
	cli.mustRun("destroy", "-auto-approve")
	waitNamespaceGone(t, client, namespace)
}

func TestAccEnvironment_destroyRefusesANamespaceReplacedByAForeignOne(t *testing.T) {
	client := adminClient(t)
	name, namespace := envTestNames(t, "replaced")
	cli, uid := environmentCLI(t, name, namespace)
	ctx := context.Background()

	// Someone deletes the environment's namespace and creates their own under the same name.
	if err := client.CoreV1().Namespaces().Delete(ctx, namespace, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitNamespaceGone(t, client, namespace)
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if getNamespace(t, client, namespace).UID == uid {
		t.Fatal("the recreated namespace has the old UID")
	}

	// Without a refresh, destroy meets the foreign namespace under the name the state records.
	expectDestroyRefused(t, cli, client, namespace, regexp.MustCompile(`(?s)Refusing to Delete Namespace.*`+namespace), "-refresh=false")
	// With one, the environment is seen gone and leaves the state; the foreign namespace stays.
	cli.mustRun("destroy", "-auto-approve")
	expectNamespaceKept(t, client, namespace, "a destroy that found the environment gone")
}

func TestAccEnvironment_destroyRefusesAProtectedNamespace(t *testing.T) {
	client := adminClient(t)
	name, namespace := envTestNames(t, "protected")
	cli, _ := environmentCLI(t, name, namespace)
	// No apply puts a protected namespace into the state, so edit it by hand: the state says
	// the environment is kube-node-lease, with that namespace's own UID, so nothing but the
	// protection stands between destroy and the namespace.
	const protected = "kube-node-lease"
	protectedUID := getNamespace(t, client, protected).UID
	var state map[string]any
	if err := json.Unmarshal([]byte(cli.mustRun("state", "pull")), &state); err != nil {
		t.Fatal(err)
	}
	attrs := state["resources"].([]any)[0].(map[string]any)["instances"].([]any)[0].(map[string]any)["attributes"].(map[string]any)
	attrs["namespace"], attrs["id"], attrs["uid"] = protected, protected, string(protectedUID)
	state["serial"] = state["serial"].(float64) + 1
	edited, err := json.Marshal(state)
	if err != nil {
		t.Fatal(err)
	}
	statePath := filepath.Join(t.TempDir(), "edited.tfstate")
	if err := os.WriteFile(statePath, edited, 0o600); err != nil {
		t.Fatal(err)
	}
	cli.mustRun("state", "push", statePath)

	expectDestroyRefused(t, cli, client, protected, regexp.MustCompile(`(?s)Refusing to Delete Namespace.*`+protected+`.*Kubernetes\s+itself\s+relies\s+on`), "-refresh=false")
	expectDestroyRefused(t, cli, client, protected, regexp.MustCompile(`(?s)Refusing to Delete Namespace.*`+protected+`.*Kubernetes\s+itself\s+relies\s+on`))
	if got := getNamespace(t, client, protected).UID; got != protectedUID {
		t.Fatalf("namespace %s was deleted and recreated (UID %s, was %s)", protected, got, protectedUID)
	}
}
