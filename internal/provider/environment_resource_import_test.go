package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlab"
)

// An import ID pinned to a UID adopts that very namespace and no other: one
// deleted and created again under the same name since it was listed is refused.
func TestAccEnvironment_importPinnedToUID(t *testing.T) {
	client, name, namespace := envTest(t, "pinned")
	ns, err := client.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	config := fmt.Sprintf(`
resource "gitlabk8s_environment" "test" {
  name            = %q
  namespace       = %q
  service_account = { enabled = false }
  network_policy  = { enabled = false }
}
`, name, namespace)

	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             func(*terraform.State) error { return namespaceGone(client, namespace) },
		Steps: []resource.TestStep{
			{
				Config:        config,
				ResourceName:  envAddr,
				ImportState:   true,
				ImportStateId: namespace + "@00000000-0000-0000-0000-000000000000",
				ExpectError:   regexp.MustCompile(`(?s)Namespace Changed Since It Was Listed.*` + string(ns.UID) + `.*nothing\s+was\s+imported`),
			},
			{
				Config:        config,
				ResourceName:  envAddr,
				ImportState:   true,
				ImportStateId: namespace + "@",
				ExpectError:   regexp.MustCompile(`(?s)Invalid Import ID.*names no UID`),
			},
			{
				Config:             config,
				ResourceName:       envAddr,
				ImportState:        true,
				ImportStateId:      namespace + "@" + string(ns.UID),
				ImportStatePersist: true,
				ImportStateCheck: func(states []*terraform.InstanceState) error {
					if len(states) != 1 || states[0].Attributes["uid"] != string(ns.UID) || states[0].Attributes["namespace"] != namespace {
						return fmt.Errorf("imported state: %v", states)
					}
					return nil
				},
			},
			{
				// The adoption marks the namespace; the destroy after it deletes it.
				Config: config,
				Check: func(*terraform.State) error {
					got := getNamespace(t, client, namespace)
					if !gitlab.OwnedBy(got.Annotations, got.Labels, name) || got.UID != ns.UID {
						return fmt.Errorf("adopted namespace: uid %s labels %v annotations %v", got.UID, got.Labels, got.Annotations)
					}
					return nil
				},
			},
		},
	})
}
