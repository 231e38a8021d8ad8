package testcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestParseEnvFile_readsExportedQuotedValues(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    map[string]string
		wantErr string
	}{
		"as cluster-up writes it": {
			in: "# Written by scripts/cluster-up.sh.\nexport KUBECONFIG='/r/.cluster/kubeconfig'\nexport GITLABK8S_KUBE_HOST='https://127.0.0.1:16443'\n",
			want: map[string]string{
				"KUBECONFIG":          "/r/.cluster/kubeconfig",
				"GITLABK8S_KUBE_HOST": "https://127.0.0.1:16443",
			},
		},
		"unquoted and without export": {
			in:   "A=b\n\n  export C=d=e  \n",
			want: map[string]string{"A": "b", "C": "d=e"},
		},
		"not an assignment": {
			in:      "export A='b'\nrm -rf /\n",
			wantErr: `line 2: want NAME=value, got "rm -rf /"`,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := parseEnvFile(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestStateDir_resolvesLikeTheScripts(t *testing.T) {
	tests := map[string]struct{ configured, want string }{
		"default":  {"", "/repo/.cluster"},
		"absolute": {"/tmp/c/", "/tmp/c"},
		"relative": {"tmp/c", "/repo/tmp/c"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := stateDir("/repo", tt.configured); got != tt.want {
				t.Errorf("stateDir(%q) = %q, want %q", tt.configured, got, tt.want)
			}
		})
	}
}

func TestLoad_reportsMissingVariables(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "env"), []byte("export KUBECONFIG='/k'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := load(dir)
	if err == nil || !strings.Contains(err.Error(), envAdminToken) || strings.Contains(err.Error(), envKubeconfig) {
		t.Fatalf("error = %v, want one naming %s but not %s", err, envAdminToken, envKubeconfig)
	}
}

func TestTailBuffer_keepsTheEnd(t *testing.T) {
	b := &tailBuffer{max: 5}
	for _, s := range []string{"abc", "defg", "h"} {
		if _, err := b.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	if got := b.String(); got != "defgh" {
		t.Errorf("got %q, want %q", got, "defgh")
	}
}

func TestLockFile_waitsForTheHolderUntilTheContextEnds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", ".lock")
	unlock, err := lockFile(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	// flock locks belong to open file descriptions, so a second open in this process contends
	// exactly like another process would.
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if _, err := lockFile(ctx, path); err == nil {
		t.Fatal("second lock taken while the first is held")
	}
	unlock()
	unlock2, err := lockFile(t.Context(), path)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	unlock2()
}

// TestEnsure_startsAClusterWithAReadyNode needs the real cluster: it may build and start it.
func TestEnsure_startsAClusterWithAReadyNode(t *testing.T) {
	if os.Getenv("TF_ACC") == "" && os.Getenv("GITLABK8S_CLUSTER_TESTS") == "" {
		t.Skip("starts the local cluster: set TF_ACC=1 or GITLABK8S_CLUSTER_TESTS=1 to run it")
	}
	// A cold first start builds the control plane from source.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Minute)
	defer cancel()
	c, err := Ensure(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for name, path := range map[string]string{"Kubeconfig": c.Kubeconfig, "CAFile": c.CAFile, "KubectlPath": c.KubectlPath} {
		if _, err := os.Stat(path); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}

	admin, err := c.Clientset(c.AdminContext)
	if err != nil {
		t.Fatal(err)
	}
	node, err := admin.CoreV1().Nodes().Get(ctx, "kwok-node-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if status := nodeConditionStatus(node, corev1.NodeReady); status != corev1.ConditionTrue {
		t.Errorf("node %s Ready = %q, want True", node.Name, status)
	}

	// ci-job may create a namespace but not delete it, and the refusal comes from the API
	// server's RBAC, not from a client-side check.
	ciJob, err := c.Clientset(c.CIJobContext)
	if err != nil {
		t.Fatal(err)
	}
	// The API server sees the CI job the context impersonates, as it sees a GitLab agent's.
	review, err := ciJob.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if user := review.Status.UserInfo; user.Username != CIJobContextJob.User() || !slices.Equal(user.Groups, append(CIJobContextJob.Groups(), "system:authenticated")) {
		t.Errorf("ci-job is %s in %v, want %s in %v", user.Username, user.Groups, CIJobContextJob.User(), CIJobContextJob.Groups())
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "testcluster-"}}
	ns, err = ciJob.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("ci-job creates a namespace: %v", err)
	}
	t.Cleanup(func() {
		// t.Context is already cancelled when cleanups run.
		if err := admin.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{}); err != nil && !errors.IsNotFound(err) {
			t.Errorf("admin deletes namespace %s: %v", ns.Name, err)
		}
	})
	err = ciJob.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{})
	if !errors.IsForbidden(err) {
		t.Fatalf("ci-job deletes namespace %s: error = %v, want Forbidden", ns.Name, err)
	}
}

func nodeConditionStatus(node *corev1.Node, condition corev1.NodeConditionType) corev1.ConditionStatus {
	for _, c := range node.Status.Conditions {
		if c.Type == condition {
			return c.Status
		}
	}
	return ""
}
