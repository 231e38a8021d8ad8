package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// webSelector selects what the web fixture's Deployment owns: its ReplicaSets and pods.
const webSelector = "app.kubernetes.io/instance=web"

// Destroy deletes the release's objects with the cascade the configuration chose: background
// (the default) returns once the objects are gone and the garbage collector removes their pods
// afterwards; foreground returns once the pods are gone too; orphan leaves them running.
func TestAccRelease_destroyCascade(t *testing.T) {
	e := testAccRelease(t)
	ctx := context.Background()
	// Removing the release from the configuration destroys it; the namespace stays.
	const nothing = `provider "gitlabk8s" {}`

	owned := func() (replicaSets, pods int, orphans int, err error) {
		rs, err := e.kube.AppsV1().ReplicaSets(e.namespace).List(ctx, metav1.ListOptions{LabelSelector: webSelector})
		if err != nil {
			return 0, 0, 0, err
		}
		for _, r := range rs.Items {
			if len(r.OwnerReferences) == 0 {
				orphans++
			}
		}
		p, err := e.kube.CoreV1().Pods(e.namespace).List(ctx, metav1.ListOptions{LabelSelector: webSelector})
		if err != nil {
			return 0, 0, 0, err
		}
		return len(rs.Items), len(p.Items), orphans, nil
	}
	running := func(*terraform.State) error {
		rs, pods, _, err := owned()
		if err != nil {
			return err
		}
		if rs == 0 || pods == 0 {
			return fmt.Errorf("after install: %d ReplicaSets and %d pods of web, want some of each", rs, pods)
		}
		return nil
	}
	// releaseGone checks what every cascade guarantees the moment destroy returns.
	releaseGone := func() error {
		for _, get := range []func() error{
			func() error {
				_, err := e.kube.AppsV1().Deployments(e.namespace).Get(ctx, "web", metav1.GetOptions{})
				return err
			},
			func() error {
				_, err := e.kube.CoreV1().Services(e.namespace).Get(ctx, "web", metav1.GetOptions{})
				return err
			},
			func() error {
				_, err := e.kube.CoreV1().ConfigMaps(e.namespace).Get(ctx, "web", metav1.GetOptions{})
				return err
			},
		} {
			if err := get(); !apierrors.IsNotFound(err) {
				return fmt.Errorf("an object of release web still exists after destroy (err %v)", err)
			}
		}
		if got := e.helmRevisions(t, "web"); len(got) != 0 {
			return fmt.Errorf("helm history after destroy = %v, want none", got)
		}
		return nil
	}

	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: e.webRelease(`  cascade = "foreground"`),
				Check: func(st *terraform.State) error {
					if err := running(st); err != nil {
						return err
					}
					return e.holdReplicaSets(t, 2*time.Second)
				},
			},
			{
				Config: nothing,
				Check: func(*terraform.State) error {
					if err := releaseGone(); err != nil {
						return err
					}
					// Foreground: nothing the Deployment owned may be left when destroy returns,
					// though the ReplicaSet was held for a while after the Deployment's deletion.
					rs, pods, _, err := owned()
					if err != nil {
						return err
					}
					if rs != 0 || pods != 0 {
						return fmt.Errorf("cascade = foreground: %d ReplicaSets and %d pods of web right after destroy, want none", rs, pods)
					}
					return nil
				},
			},
			{
				Config: e.webRelease(""),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(webAddress, tfjsonpath.New("cascade"), knownvalue.StringExact("background")),
				},
				Check: func(st *terraform.State) error {
					if err := running(st); err != nil {
						return err
					}
					return e.holdReplicaSets(t, 5*time.Second)
				},
			},
			{
				Config: nothing,
				Check: func(*terraform.State) error {
					if err := releaseGone(); err != nil {
						return err
					}
					// Background: destroy did not wait for what the Deployment owned (its
					// ReplicaSet is still held), and the garbage collector removes it afterwards.
					if rs, _, _, err := owned(); err != nil || rs == 0 {
						return fmt.Errorf("cascade = background: %d ReplicaSets of web right after destroy (err %v), want the held one still there", rs, err)
					}
					deadline := time.Now().Add(90 * time.Second)
					for {
						rs, pods, _, err := owned()
						if err != nil {
							return err
						}
						if rs == 0 && pods == 0 {
							return nil
						}
						if time.Now().After(deadline) {
							return fmt.Errorf("cascade = background: %d ReplicaSets and %d pods of web still exist 90s after destroy", rs, pods)
						}
						time.Sleep(500 * time.Millisecond)
					}
				},
			},
			{
				Config: e.webRelease(`  cascade = "orphan"`),
				Check:  running,
			},
			{
				Config: nothing,
				Check: func(*terraform.State) error {
					if err := releaseGone(); err != nil {
						return err
					}
					// Orphan: the ReplicaSet and its pod stay, no longer owned by anything.
					rs, pods, orphans, err := owned()
					if err != nil {
						return err
					}
					if rs == 0 || pods == 0 || orphans != rs {
						return fmt.Errorf("cascade = orphan: %d ReplicaSets (%d without an owner) and %d pods after destroy, want them all left, unowned", rs, orphans, pods)
					}
					return nil
				},
			},
		},
	})
}

// holdReplicaSets puts a finalizer on web's ReplicaSets and removes it once web's Deployment
// has been being deleted for hold: a destroy that waits for what the Deployment owns lasts at
// least that long, and one that does not returns while the ReplicaSets still exist.
func (e *releaseTestEnv) holdReplicaSets(t *testing.T, hold time.Duration) error {
	ctx := context.Background()
	const finalizer = "gitlabk8s.test/hold"
	list, err := e.kube.AppsV1().ReplicaSets(e.namespace).List(ctx, metav1.ListOptions{LabelSelector: webSelector})
	if err != nil {
		return err
	}
	for _, rs := range list.Items {
		patch := fmt.Sprintf(`{"metadata":{"finalizers":[%q]}}`, finalizer)
		if _, err := e.kube.AppsV1().ReplicaSets(e.namespace).Patch(ctx, rs.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("hold ReplicaSet %s: %w", rs.Name, err)
		}
	}
	done := make(chan struct{})
	t.Cleanup(func() { <-done })
	go func() {
		defer close(done)
		release := func() {
			for _, rs := range list.Items {
				_, err := e.kube.AppsV1().ReplicaSets(e.namespace).Patch(ctx, rs.Name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
				if err != nil && !apierrors.IsNotFound(err) {
					t.Errorf("release ReplicaSet %s: %v", rs.Name, err)
				}
			}
		}
		deadline := time.Now().Add(2 * time.Minute)
		for time.Now().Before(deadline) {
			d, err := e.kube.AppsV1().Deployments(e.namespace).Get(ctx, "web", metav1.GetOptions{})
			if apierrors.IsNotFound(err) || (err == nil && d.DeletionTimestamp != nil) {
				time.Sleep(hold)
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		release()
	}()
	return nil
}

// A destroy names the objects Helm's uninstall kept because their resource policy says keep,
// as Helm's CLI lists them: a cluster-scoped one as outliving the environment, with
// take_ownership for the next release that installs it, and a namespaced one as going with its
// namespace. Both are still there afterwards, and the release's records are gone.
func TestAccRelease_destroyNamesWhatTheResourcePolicyKept(t *testing.T) {
	e := testAccRelease(t)
	ctx := context.Background()
	clusterRole := e.namespace + "-checks"
	t.Cleanup(func() {
		_ = e.kube.RbacV1().ClusterRoles().Delete(context.Background(), clusterRole, metav1.DeleteOptions{})
	})
	keep := `jsonencode([{ op = "add", path = "/metadata/annotations", value = { "helm.sh/resource-policy" = "keep" } }])`
	cli := newTerraformCLI(t, suiteCLI(t))
	cli.writeConfig(e.fixtureRelease("checks", "checks", fmt.Sprintf(`  set = { clusterRole = "true" }
  patches = [
    { target = { kind = "ClusterRole" }, patch = %s },
    { target = { kind = "Service" }, patch = %s },
  ]`, keep, keep)))
	cli.mustRun("apply", "-auto-approve")
	out := cli.mustRun("destroy", "-auto-approve")
	for _, want := range []string{
		"Objects Kept by the Uninstall",
		"Helm kept 2 of its objects",
		"ClusterRole " + clusterRole,
		"take_ownership = true",
		"Service " + e.namespace + "/checks",
	} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
			t.Errorf("destroy does not say %q:\n%s", want, out)
		}
	}
	if _, err := e.kube.RbacV1().ClusterRoles().Get(ctx, clusterRole, metav1.GetOptions{}); err != nil {
		t.Errorf("ClusterRole %s after the destroy: %v, want it kept", clusterRole, err)
	}
	if _, err := e.kube.CoreV1().Services(e.namespace).Get(ctx, "checks", metav1.GetOptions{}); err != nil {
		t.Errorf("Service checks after the destroy: %v, want it kept", err)
	}
	if revisions := e.helmRevisions(t, "checks"); len(revisions) > 0 {
		t.Errorf("helm history of checks after the destroy = %v, want none", revisions)
	}
}
