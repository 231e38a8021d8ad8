package startwarm

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestStart_onlyWhenTerraformAsksForAutomaticMTLS(t *testing.T) {
	if done := start(func(string) string { return "" }); done != nil {
		t.Error("started without PLUGIN_CLIENT_CERT")
	}
	done := start(func(name string) string {
		if name == "PLUGIN_CLIENT_CERT" {
			return "-----BEGIN CERTIFICATE-----"
		}
		return ""
	})
	if done == nil {
		t.Fatal("not started with PLUGIN_CLIENT_CERT")
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("the warm-up failed: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the warm-up did not end within a minute")
	}
	// This test process was not started by Terraform.
	if started != nil && os.Getenv("PLUGIN_CLIENT_CERT") == "" {
		t.Error("a warm-up started in a process without PLUGIN_CLIENT_CERT")
	}
}

// The warm-up pays only while go-plugin, the version this module builds with, generates its
// certificate on the curve warmed here.
func TestGoPlugin_generatesItsCertificateOnP521(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/hashicorp/go-plugin").Output()
	if err != nil {
		t.Fatalf("go list -m github.com/hashicorp/go-plugin: %v", err)
	}
	src, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "mtls.go"))
	if err != nil {
		t.Fatalf("go-plugin's certificate generation: %v", err)
	}
	if !strings.Contains(string(src), "ecdsa.GenerateKey(elliptic.P521(), rand.Reader)") {
		t.Error("go-plugin no longer generates its key with ecdsa.GenerateKey(elliptic.P521(), ...): warm its curve instead")
	}
}
