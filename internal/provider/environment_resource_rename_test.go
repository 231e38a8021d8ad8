package provider

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/environment"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlab"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/testcluster"
)

// renameTestProject is the GitLab project of the rename tests: with it, an
// environment's default namespace is derived from its name, as in CI, so a
// new name means a new namespace.
const renameTestProject = `
provider "gitlabk8s" {
  config_context = %q
  gitlab = {
    project_id        = "42"
    project_path_slug = "group-app"
  }
}
`

// renamedEnvironment is an environment before and after a rename: its names and
// the default namespaces of renameTestProject that go with them.
type renamedEnvironment struct {
	oldName, oldNamespace string
	newName, newNamespace string
}

func newRenamedEnvironment(t *testing.T, client kubernetes.Interface) renamedEnvironment {
	oldName, _ := envTestNames(t, "before")
	newName, _ := envTestNames(t, "after")
	e := renamedEnvironment{
		oldName: oldName, oldNamespace: gitlab.DefaultNamespace("group-app", "42", gitlab.EnvironmentSlug(oldName)),
		newName: newName, newNamespace: gitlab.DefaultNamespace("group-app", "42", gitlab.EnvironmentSlug(newName)),
	}
	cleanupNamespace(t, client, e.oldNamespace)
	cleanupNamespace(t, client, e.newNamespace)
	return e
}

// config is the environment called name in its default namespace, applied with
// the kubeconfig context identity.
func (e renamedEnvironment) config(identity, name string) string {
	return fmt.Sprintf(renameTestProject, identity) + fmt.Sprintf(`
resource "gitlabk8s_environment" "test" {
  name = %q
}
`, name)
}

// bothGone checks that neither namespace of the environment is left.
func (e renamedEnvironment) bothGone(client kubernetes.Interface) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if err := namespaceGone(client, e.oldNamespace); err != nil {
			return err
		}
		return namespaceGone(client, e.newNamespace)
	}
}

// expectReplacedBy checks that the plan replaces address because of exactly the
// attributes in paths, so the plan tells the user why the environment is replaced.
func expectReplacedBy(address string, paths ...string) plancheck.PlanCheck {
	return replacePathsCheck{address: address, want: paths}
}

type replacePathsCheck struct {
	address string
	want    []string
}

func (c replacePathsCheck) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Address != c.address {
			continue
		}
		var got []string
		for _, p := range rc.Change.ReplacePaths {
			got = append(got, fmt.Sprint(p))
		}
		want := make([]string, len(c.want))
		for i, p := range c.want {
			want[i] = fmt.Sprint([]any{p})
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			resp.Error = fmt.Errorf("%s is replaced because of %v, want %v", c.address, got, want)
		}
		return
	}
	resp.Error = fmt.Errorf("%s is not in the plan", c.address)
}

// expectPriorState checks the state the plan starts from: the value of each
// attribute want returns, before the change. want is called when the plan is
// checked, so it can return values recorded by earlier steps.
func expectPriorState(address string, want func() map[string]string) plancheck.PlanCheck {
	return priorStateCheck{address: address, want: want}
}

type priorStateCheck struct {
	address string
	want    func() map[string]string
}

func (c priorStateCheck) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Address != c.address {
			continue
		}
		before, _ := rc.Change.Before.(map[string]any)
		for attribute, want := range c.want() {
			if got := before[attribute]; got != want {
				resp.Error = fmt.Errorf("%s.%s in the state before the plan = %v, want %q", c.address, attribute, got, want)
				return
			}
		}
		return
	}
	resp.Error = fmt.Errorf("%s is not in the plan", c.address)
}

// checkOwnedNamespace fails unless namespace exists, is not terminating and
// carries the ownership marker and GitLab's annotations of the environment
// name, and no longer those of other.
func checkOwnedNamespace(client kubernetes.Interface, namespace, name, other string) error {
	ns, err := client.CoreV1().Namespaces().Get(context.Background(), namespace, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("namespace %s: %w", namespace, err)
	}
	slug := gitlab.EnvironmentSlug(name)
	switch {
	case ns.DeletionTimestamp != nil:
		return fmt.Errorf("namespace %s is terminating", namespace)
	case !gitlab.OwnedBy(ns.Annotations, ns.Labels, name) || gitlab.OwnedBy(ns.Annotations, ns.Labels, other):
		return fmt.Errorf("namespace %s is not marked as %q's alone: labels %v annotations %v", namespace, name, ns.Labels, ns.Annotations)
	case ns.Labels[gitlab.LabelEnvironmentSlug] != slug || ns.Annotations[gitlab.AnnotationGitLabEnv] != slug || ns.Annotations[gitlab.AnnotationGitLabApp] != "group-app":
		return fmt.Errorf("namespace %s lacks the slug %s or GitLab's annotations: labels %v annotations %v", namespace, slug, ns.Labels, ns.Annotations)
	}
	return nil
}

// Renaming an environment changes its default namespace: the plan replaces
// the environment because of the namespace, and the apply deletes the old
// namespace (destroy waits until it is gone) before creating the new one.
func TestAccEnvironment_renameReplacesTheNamespace(t *testing.T) {
	client := adminClient(t)
	e := newRenamedEnvironment(t, client)
	ctx := context.Background()
	var oldUID string

	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             e.bothGone(client),
		Steps: []resource.TestStep{
			{
				Config: e.config("admin", e.oldName),
				Check: func(*terraform.State) error {
					oldUID = string(getNamespace(t, client, e.oldNamespace).UID)
					return checkOwnedNamespace(client, e.oldNamespace, e.oldName, e.newName)
				},
			},
			{
				Config: e.config("admin", e.newName),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(envAddr, plancheck.ResourceActionDestroyBeforeCreate),
					expectReplacedBy(envAddr, "namespace"),
					expectPriorState(envAddr, func() map[string]string { return map[string]string{"namespace": e.oldNamespace, "uid": oldUID} }),
					plancheck.ExpectKnownValue(envAddr, tfjsonpath.New("namespace"), knownvalue.StringExact(e.newNamespace)),
					plancheck.ExpectKnownValue(envAddr, tfjsonpath.New("slug"), knownvalue.StringExact(gitlab.EnvironmentSlug(e.newName))),
					plancheck.ExpectKnownValue(envAddr, tfjsonpathManifest("Namespace/"+e.newNamespace), knownStringContaining(gitlab.AnnotationEnvironment+": "+e.newName)),
					plancheck.ExpectUnknownValue(envAddr, tfjsonpath.New("uid")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(envAddr, tfjsonpath.New("id"), knownvalue.StringExact(e.newNamespace)),
				},
				Check: func(s *terraform.State) error {
					if err := namespaceGone(client, e.oldNamespace); err != nil {
						return fmt.Errorf("after the rename: %w", err)
					}
					if err := checkOwnedNamespace(client, e.newNamespace, e.newName, e.oldName); err != nil {
						return err
					}
					ns := getNamespace(t, client, e.newNamespace)
					if uid := s.RootModule().Resources[envAddr].Primary.Attributes["uid"]; uid != string(ns.UID) || uid == oldUID {
						return fmt.Errorf("state uid %s, want the new namespace's %s (the old one was %s)", uid, ns.UID, oldUID)
					}
					sa, err := client.CoreV1().ServiceAccounts(e.newNamespace).Get(ctx, environment.DefaultServiceAccountName, metav1.GetOptions{})
					if err != nil {
						return err
					}
					if !gitlab.OwnedBy(sa.Annotations, sa.Labels, e.newName) {
						return fmt.Errorf("ServiceAccount in the new namespace is not marked as %q's: %v", e.newName, sa.Annotations)
					}
					return nil
				},
			},
		},
	})
}

// Renaming the deploy ServiceAccount renames its Role and RoleBinding with it,
// in place: the new ones are applied, the binding names the new account, and
// the old three are deleted.
func TestAccEnvironment_renameServiceAccountDeletesTheOldOne(t *testing.T) {
	client, name, namespace := envTest(t, "sa")
	ctx := context.Background()
	const newAccount = "ci-deploy"
	oldAccount := environment.DefaultServiceAccountName
	config := func(serviceAccount string) string { return environmentAs("admin", name, namespace, serviceAccount) }
	keys := func(account string) map[string]*manifestLines {
		return map[string]*manifestLines{
			"ServiceAccount/" + account:                        nil,
			"Role.rbac.authorization.k8s.io/" + account:        nil,
			"RoleBinding.rbac.authorization.k8s.io/" + account: nil,
		}
	}
	renamed := keys(oldAccount)
	for k, v := range keys(newAccount) {
		renamed[k] = v
	}
	var namespaceUID string

	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             func(*terraform.State) error { return namespaceGone(client, namespace) },
		Steps: []resource.TestStep{
			{
				Config: config(""),
				Check: func(*terraform.State) error {
					namespaceUID = string(getNamespace(t, client, namespace).UID)
					_, err := client.CoreV1().ServiceAccounts(namespace).Get(ctx, oldAccount, metav1.GetOptions{})
					return err
				},
			},
			{
				Config: config(fmt.Sprintf(`service_account = { name = %q }`, newAccount)),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(envAddr, plancheck.ResourceActionUpdate),
						expectManifestChanges(envAddr, renamed),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: func(*terraform.State) error {
					sa, err := client.CoreV1().ServiceAccounts(namespace).Get(ctx, newAccount, metav1.GetOptions{})
					if err != nil {
						return fmt.Errorf("new ServiceAccount: %w", err)
					}
					role, err := client.RbacV1().Roles(namespace).Get(ctx, newAccount, metav1.GetOptions{})
					if err != nil {
						return fmt.Errorf("new Role: %w", err)
					}
					binding, err := client.RbacV1().RoleBindings(namespace).Get(ctx, newAccount, metav1.GetOptions{})
					if err != nil {
						return fmt.Errorf("new RoleBinding: %w", err)
					}
					for what, meta := range map[string]metav1.ObjectMeta{"ServiceAccount": sa.ObjectMeta, "Role": role.ObjectMeta, "RoleBinding": binding.ObjectMeta} {
						if !gitlab.OwnedBy(meta.Annotations, meta.Labels, name) {
							return fmt.Errorf("new %s is not marked as the environment's: labels %v annotations %v", what, meta.Labels, meta.Annotations)
						}
					}
					if binding.RoleRef.Kind != "Role" || binding.RoleRef.Name != newAccount {
						return fmt.Errorf("RoleBinding %s refers to %s %s, want Role %s", newAccount, binding.RoleRef.Kind, binding.RoleRef.Name, newAccount)
					}
					if len(binding.Subjects) != 1 || binding.Subjects[0].Kind != "ServiceAccount" || binding.Subjects[0].Name != newAccount || binding.Subjects[0].Namespace != namespace {
						return fmt.Errorf("RoleBinding %s binds %+v, want only ServiceAccount %s/%s", newAccount, binding.Subjects, namespace, newAccount)
					}
					for what, err := range map[string]error{
						"ServiceAccount": getErr(client.CoreV1().ServiceAccounts(namespace).Get(ctx, oldAccount, metav1.GetOptions{})),
						"Role":           getErr(client.RbacV1().Roles(namespace).Get(ctx, oldAccount, metav1.GetOptions{})),
						"RoleBinding":    getErr(client.RbacV1().RoleBindings(namespace).Get(ctx, oldAccount, metav1.GetOptions{})),
					} {
						if !apierrors.IsNotFound(err) {
							return fmt.Errorf("old %s %s was not deleted: %v", what, oldAccount, err)
						}
					}
					if ns := getNamespace(t, client, namespace); string(ns.UID) != namespaceUID {
						return fmt.Errorf("the namespace was replaced, not updated in place")
					}
					return nil
				},
			},
		},
	})
}

// A rename applied by an identity that may not delete namespaces (a GitLab
// agent's CI job) fails at the deletion that the replacement starts with, and
// loses nothing: the old namespace stays and the state still holds it, so the
// same replacement is planned again and an identity with the right completes it.
func TestAccEnvironment_renameWithoutDeleteRightKeepsEverything(t *testing.T) {
	client := adminClient(t)
	e := newRenamedEnvironment(t, client)
	ctx := context.Background()
	var oldUID string
	replacement := []plancheck.PlanCheck{
		plancheck.ExpectResourceAction(envAddr, plancheck.ResourceActionDestroyBeforeCreate),
		expectReplacedBy(envAddr, "namespace"),
		plancheck.ExpectKnownValue(envAddr, tfjsonpath.New("namespace"), knownvalue.StringExact(e.newNamespace)),
	}

	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             e.bothGone(client),
		Steps: []resource.TestStep{
			{
				Config: e.config("admin", e.oldName),
				Check: func(*terraform.State) error {
					oldUID = string(getNamespace(t, client, e.oldNamespace).UID)
					return nil
				},
			},
			{
				Config:           e.config("ci-job", e.newName),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: replacement},
				ExpectError: wrappedText("Unable to Delete Namespace",
					`The identity "`+testcluster.CIJobContextJob.User()+`" may not delete the namespace `+e.oldNamespace,
					`RBAC refuses the verb "delete" on the resource "namespaces"`,
					"The namespace and the Terraform state were both kept"),
			},
			{
				// Nothing was deleted or created, and the state still holds the old
				// namespace: the same replacement is planned, from the old UID.
				PreConfig: func() {
					ns := getNamespace(t, client, e.oldNamespace)
					if ns.DeletionTimestamp != nil || string(ns.UID) != oldUID {
						t.Fatalf("namespace %s after the refused rename: uid %s (was %s), deletionTimestamp %v", e.oldNamespace, ns.UID, oldUID, ns.DeletionTimestamp)
					}
					if err := checkOwnedNamespace(client, e.oldNamespace, e.oldName, e.newName); err != nil {
						t.Fatal(err)
					}
					if _, err := client.CoreV1().ServiceAccounts(e.oldNamespace).Get(ctx, environment.DefaultServiceAccountName, metav1.GetOptions{}); err != nil {
						t.Fatalf("the refused rename lost the old namespace's ServiceAccount: %v", err)
					}
					if _, err := client.CoreV1().Namespaces().Get(ctx, e.newNamespace, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
						t.Fatalf("namespace %s exists after the refused rename: %v", e.newNamespace, err)
					}
				},
				Config: e.config("admin", e.newName),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: append(slices.Clone(replacement),
					expectPriorState(envAddr, func() map[string]string {
						return map[string]string{"name": e.oldName, "namespace": e.oldNamespace, "uid": oldUID}
					}),
				)},
				Check: func(*terraform.State) error {
					if err := namespaceGone(client, e.oldNamespace); err != nil {
						return err
					}
					return checkOwnedNamespace(client, e.newNamespace, e.newName, e.oldName)
				},
			},
		},
	})
}

// An in-place update the identity may not make (ci-job may not write
// ResourceQuotas) stops at that object and keeps the state as it was, so the
// same change is planned again and nothing the environment had is lost.
func TestAccEnvironment_updateRefusedByRBACKeepsTheState(t *testing.T) {
	client, name, namespace := envTest(t, "refused")
	ctx := context.Background()
	config := func(identity string, pods int) string {
		return environmentAs(identity, name, namespace, fmt.Sprintf(`resource_quota = { pods = "%d" }`, pods))
	}
	quotaChange := expectManifestChanges(envAddr, map[string]*manifestLines{
		quotaKey: {removed: []string{`pods: "5"`}, added: []string{`pods: "10"`}},
	})
	checkQuota := func(want string) error {
		q, err := client.CoreV1().ResourceQuotas(namespace).Get(ctx, environment.ResourceQuotaName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got := q.Spec.Hard["pods"]; got.String() != want {
			return fmt.Errorf("quota pods = %s, want %s", got.String(), want)
		}
		return nil
	}
	var namespaceUID string

	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             func(*terraform.State) error { return namespaceGone(client, namespace) },
		Steps: []resource.TestStep{
			{
				Config: config("admin", 5),
				Check: func(*terraform.State) error {
					namespaceUID = string(getNamespace(t, client, namespace).UID)
					return checkQuota("5")
				},
			},
			{
				Config: config("ci-job", 10),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(envAddr, plancheck.ResourceActionUpdate), quotaChange,
				}},
				ExpectError: wrappedText("Unable to Apply Environment Object",
					"Applying ResourceQuota/"+environment.ResourceQuotaName, `The identity "`+testcluster.CIJobContextJob.User()+`" may not patch`,
					`RBAC refuses the verb "patch" on the resource "resourcequotas"`,
					"--verb=create,patch --resource=resourcequotas", "the objects applied so far are kept"),
			},
			{
				PreConfig: func() {
					if err := checkQuota("5"); err != nil {
						t.Fatalf("after the refused update: %v", err)
					}
					if ns := getNamespace(t, client, namespace); string(ns.UID) != namespaceUID || ns.DeletionTimestamp != nil {
						t.Fatalf("namespace %s changed identity or is terminating after the refused update", namespace)
					}
				},
				Config: config("admin", 10),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(envAddr, plancheck.ResourceActionUpdate), quotaChange,
					expectPriorState(envAddr, func() map[string]string { return map[string]string{"uid": namespaceUID} }),
				}},
				Check: func(*terraform.State) error { return checkQuota("10") },
			},
		},
	})
}

// A rename that RBAC stops part way, after the namespace already carries the new name's
// ownership marker, leaves an environment that can still be renamed back or destroyed: the
// state records the name the namespace now carries.
func TestAccEnvironment_halfAppliedRenameCanBeRevertedOrDestroyed(t *testing.T) {
	client := adminClient(t)
	for _, then := range []string{"revert", "destroy"} {
		t.Run(then, func(t *testing.T) {
			oldName, namespace := envTestNames(t, "half")
			newName, _ := envTestNames(t, "half-new")
			cleanupNamespace(t, client, namespace)
			config := func(identity, name string) string {
				return environmentAs(identity, name, namespace, `resource_quota = { pods = "5" }`)
			}
			var namespaceUID string
			last := resource.TestStep{
				// Renamed back as admin: the namespace is this environment's again, same UID.
				PreConfig: func() {
					ns := getNamespace(t, client, namespace)
					if !gitlab.OwnedBy(ns.Annotations, ns.Labels, newName) {
						t.Fatalf("the refused rename did not get as far as the namespace's marker (annotations %v): the test no longer sets up a half-applied rename", ns.Annotations)
					}
				},
				Config: config("admin", oldName),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(envAddr, tfjsonpath.New("name"), knownvalue.StringExact(oldName)),
				},
				Check: func(*terraform.State) error {
					ns := getNamespace(t, client, namespace)
					if string(ns.UID) != namespaceUID || !gitlab.OwnedBy(ns.Annotations, ns.Labels, oldName) {
						return fmt.Errorf("after renaming back: namespace uid %s (want %s), annotations %v", ns.UID, namespaceUID, ns.Annotations)
					}
					return nil
				},
			}
			if then == "destroy" {
				last = resource.TestStep{
					PreConfig: last.PreConfig,
					Config:    config("admin", newName),
					Destroy:   true,
					Check:     func(*terraform.State) error { return namespaceGone(client, namespace) },
				}
			}
			testAccResourceTest(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				CheckDestroy:             func(*terraform.State) error { return namespaceGone(client, namespace) },
				Steps: []resource.TestStep{
					{
						Config: config("admin", oldName),
						Check: func(*terraform.State) error {
							namespaceUID = string(getNamespace(t, client, namespace).UID)
							return nil
						},
					},
					{
						// ci-job may mark the namespace but not write the ResourceQuota.
						Config:      config("ci-job", newName),
						ExpectError: wrappedText("Unable to Apply Environment Object", "ResourceQuota/"+environment.ResourceQuotaName, `"`+testcluster.CIJobContextJob.User()+`" may not patch`),
					},
					last,
				},
			})
		})
	}
}

// environmentAs is the environment name in namespace, applied with the kubeconfig context
// identity; body adds attributes.
func environmentAs(identity, name, namespace, body string) string {
	return fmt.Sprintf(`
provider "gitlabk8s" {
  config_context = %q
}

resource "gitlabk8s_environment" "test" {
  name      = %q
  namespace = %q
  %s
}
`, identity, name, namespace, body)
}
