package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The release builds every platform .goreleaser.yml names, not only Linux, where the tests run:
// code that only Linux compiles, in a package every platform links, breaks the others' builds.
// Two of them are built here as the release builds them.
func TestBuild_platformsOtherThanLinux(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("cross-compiles the provider: runs in the acceptance pass, set TF_ACC=1 to run it")
	}
	release, err := os.ReadFile(".goreleaser.yml")
	if err != nil {
		t.Fatal(err)
	}
	for _, platform := range []string{"darwin/arm64", "windows/amd64"} {
		goos, goarch, _ := strings.Cut(platform, "/")
		if !strings.Contains(string(release), "- "+goos+"\n") || !strings.Contains(string(release), "- "+goarch+"\n") {
			t.Errorf(".goreleaser.yml builds no %s: this test builds what the release does not", platform)
			continue
		}
		cmd := exec.Command("go", "build", "-trimpath", "-o", os.DevNull, ".")
		cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("the provider does not build for %s: %v\n%s", platform, err, out)
		}
	}
}
