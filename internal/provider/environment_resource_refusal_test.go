package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/testcluster"
)

// Admission answers 403 Forbidden too, as RBAC does: a policy that refuses the environment's
// namespace is named as the refuser, and the diagnostic does not tell the user to grant rights
// that the identity already has.
func TestAccEnvironment_admissionRefusalIsNotAnRBACRefusal(t *testing.T) {
	client, name, namespace := envTest(t, "admission")
	ctx := context.Background()
	const label = "gitlabk8s.test/refuse"
	forbidden := metav1.StatusReasonForbidden
	policy := "gitlabk8s-test-" + namespace
	remove, err := testcluster.DenyPolicy{
		Name:       policy,
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"namespaces"}},
		Expression: "false",
		Message:    "this namespace is refused",
		Reason:     &forbidden,
		Match:      &admissionregistrationv1.MatchResources{ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{label: namespace}}},
	}.Create(ctx, client)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(remove)
	probe := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace, Labels: map[string]string{label: namespace}}}
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := client.CoreV1().Namespaces().Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil && strings.Contains(err.Error(), "this namespace is refused"), nil
	})
	if err != nil {
		t.Fatalf("the policy %s is not enforced: %v", policy, err)
	}
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             func(*terraform.State) error { return namespaceGone(client, namespace) },
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
resource "gitlabk8s_environment" "test" {
  name            = %q
  namespace       = %q
  labels          = { %q = %q }
  service_account = { enabled = false }
  network_policy  = { enabled = false }
}
`, name, namespace, label, namespace),
			ExpectError: wrappedPattern(fmt.Sprintf(`(?s)Unable to Apply Environment Object.*Namespace/%s.*refused by the ValidatingAdmissionPolicy %q, not for lack of rights.*this namespace is refused`, namespace, policy)),
		}},
	})
}
