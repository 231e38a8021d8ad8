package kube

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

func writeKubeconfig(t *testing.T, dir, name, server, current string, contexts ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Config\nclusters:\n- name: " + name + "\n  cluster: {server: \"" + server + "\"}\nusers:\n- name: " + name + "\n  user: {token: t}\ncontexts:\n")
	for _, c := range contexts {
		b.WriteString("- name: \"" + c + "\"\n  context: {cluster: " + name + ", user: " + name + "}\n")
	}
	if current != "" {
		b.WriteString("current-context: \"" + current + "\"\n")
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func noInCluster() (*rest.Config, error) { return nil, rest.ErrNotInCluster }

func TestResolve_kubeconfigListIsMergedLikeKubectl(t *testing.T) {
	dir := t.TempDir()
	first := writeKubeconfig(t, dir, "first", "https://first:6443", "", "a")
	second := writeKubeconfig(t, dir, "second", "https://second:6443", "group/agents:review", "group/agents:review")
	cfg, src, err := Resolve(Options{KubeconfigEnv: first + ":" + filepath.Join(dir, "missing") + ":" + second, HomeDir: dir, InCluster: noInCluster})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://second:6443" || src.Context != "group/agents:review" {
		t.Fatalf("got host %q context %q, want the second file's current context", cfg.Host, src.Context)
	}
	if !strings.Contains(src.Origin, first) || !strings.Contains(src.Origin, second) {
		t.Fatalf("origin %q should list both files", src.Origin)
	}
}

func TestResolve_contextOverridesCurrentContext(t *testing.T) {
	dir := t.TempDir()
	p := writeKubeconfig(t, dir, "one", "https://one:6443", "a", "a", "b")
	_, src, err := Resolve(Options{ConfigPath: p, Context: "b", InCluster: noInCluster})
	if err != nil || src.Context != "b" {
		t.Fatalf("got context %q err %v, want b", src.Context, err)
	}
}

func TestResolve_unknownContextListsTheAvailableOnes(t *testing.T) {
	dir := t.TempDir()
	p := writeKubeconfig(t, dir, "one", "https://one:6443", "a", "a", "b")
	_, _, err := Resolve(Options{ConfigPath: p, Context: "c", InCluster: noInCluster})
	if err == nil || !strings.Contains(err.Error(), `context "c" does not exist`) || !strings.Contains(err.Error(), `"a", "b"`) {
		t.Fatalf("got %v", err)
	}
	var contextErr *ContextError
	if !errors.Is(err, ErrContextNotFound) || !errors.As(err, &contextErr) || contextErr.Context != "c" || !slices.Equal(contextErr.Available, []string{"a", "b"}) {
		t.Errorf("got %#v, want a *ContextError of context c, not found, with a and b available", err)
	}
}

// A context whose cluster client-go cannot use is a *ContextError too, but not ErrContextNotFound.
func TestResolve_invalidContextIsTyped(t *testing.T) {
	p := filepath.Join(t.TempDir(), "kubeconfig")
	config := "apiVersion: v1\nkind: Config\nclusters:\n- name: one\n  cluster: {server: \"https://one:6443\", certificate-authority: /nonexistent/ca.crt}\n" +
		"users:\n- name: one\n  user: {token: t}\ncontexts:\n- name: a\n  context: {cluster: one, user: one}\n"
	if err := os.WriteFile(p, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := Resolve(Options{ConfigPath: p, Context: "a", InCluster: noInCluster})
	var contextErr *ContextError
	if !errors.As(err, &contextErr) || contextErr.Context != "a" || errors.Is(err, ErrContextNotFound) {
		t.Fatalf("got %#v, want a *ContextError of context a that was found", err)
	}
}

func TestResolve_missingConfigPathIsNamed(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "kubeconfig")
	_, _, err := Resolve(Options{ConfigPath: missing, InCluster: noInCluster})
	if err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("got %v, want the path named", err)
	}
}

func TestResolve_homeKubeconfigThenNothing(t *testing.T) {
	home := t.TempDir()
	_, _, err := Resolve(Options{HomeDir: home, InCluster: noInCluster})
	if !errors.Is(err, ErrNoConfiguration) {
		t.Fatalf("got %v, want ErrNoConfiguration", err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".kube"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeKubeconfig(t, filepath.Join(home, ".kube"), "config", "https://home:6443", "h", "h")
	cfg, _, err := Resolve(Options{HomeDir: home, InCluster: noInCluster})
	if err != nil || cfg.Host != "https://home:6443" {
		t.Fatalf("got %v %v", cfg, err)
	}
}

func TestResolve_explicitHostIgnoresKubeconfig(t *testing.T) {
	dir := t.TempDir()
	p := writeKubeconfig(t, dir, "one", "https://one:6443", "a", "a")
	cfg, src, err := Resolve(Options{Host: "https://explicit:6443", Token: "x", Insecure: true, KubeconfigEnv: p})
	if err != nil || cfg.Host != "https://explicit:6443" || src.Origin != "explicit host" {
		t.Fatalf("got %v %v %v", cfg, src, err)
	}
}

func TestResolve_badCACertificateIsRejected(t *testing.T) {
	_, _, err := Resolve(Options{Host: "https://explicit:6443", ClusterCACertificate: "not a pem"})
	if err == nil || !strings.Contains(err.Error(), "invalid explicit configuration for host https://explicit:6443") ||
		!strings.Contains(err.Error(), "root certificates") || errors.Is(err, ErrNoConfiguration) {
		t.Fatalf("got %v, want the explicit host's configuration refused for its CA certificate", err)
	}
}
