package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The release builds every platform .goreleaser.yml names, not only Linux, where the tests run:
// code that only Linux compiles, in a package every platform links, breaks the others' builds,
// and a constant too large for a 32-bit int breaks the 32-bit ones. One build of each operating
// system and one 32-bit build are made here as the release makes them.
func TestBuild_releasePlatforms(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("cross-compiles the provider: runs in the acceptance pass, set TF_ACC=1 to run it")
	}
	release, err := os.ReadFile(".goreleaser.yml")
	if err != nil {
		t.Fatal(err)
	}
	for _, platform := range []string{"darwin/arm64", "windows/amd64", "freebsd/amd64", "linux/386"} {
		goos, goarch, _ := strings.Cut(platform, "/")
		if !lists(string(release), goos) || !lists(string(release), goarch) {
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

// lists reports whether .goreleaser.yml's text has value as an item of a list, quoted or not
// ("386" is quoted there, as YAML would otherwise read a number).
func lists(release, value string) bool {
	return strings.Contains(release, "- "+value+"\n") || strings.Contains(release, "- \""+value+"\"\n")
}
