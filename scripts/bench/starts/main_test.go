package main

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// A start is timed up to the handshake line of a provider that serves; a program that ends
// without one is an error, not a time.
func TestHandshake_timesAProviderAndRefusesAProgramWithoutOne(t *testing.T) {
	cert, err := clientCertificate()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "terraform-provider-minimal")
	if out, err := exec.Command("go", "build", "-o", bin, "../minimal").CombinedOutput(); err != nil {
		t.Fatalf("build the do-nothing provider: %v\n%s", err, out)
	}
	if d, err := handshake(bin, cert); err != nil || d <= 0 {
		t.Errorf("handshake(do-nothing provider) = %v, %v; want a time", d, err)
	}
	if d, err := handshake("true", cert); err == nil {
		t.Errorf("handshake(true) = %v, want an error: it prints no handshake line", d)
	}
}
