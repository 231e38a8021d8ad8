package main

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The release builds every platform .goreleaser.yml names, not only Linux, where the tests run:
// code that only Linux compiles, in a package every platform links, breaks the others' builds,
// and a constant too large for a 32-bit int breaks the 32-bit ones. One build of each operating
// system and one 32-bit build are made here as the release makes them, of each main package the
// release builds for it (on Linux the front, cmd/front, and the engine, this package).
func TestBuild_releasePlatforms(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("cross-compiles the provider: runs in the acceptance pass, set TF_ACC=1 to run it")
	}
	built := releasePlatforms(t)
	for _, platform := range []string{"darwin/arm64", "windows/amd64", "freebsd/amd64", "linux/386"} {
		mains := built[platform]
		if len(mains) == 0 {
			t.Errorf(".goreleaser.yml builds no %s: this test builds what the release does not", platform)
			continue
		}
		goos, goarch, _ := strings.Cut(platform, "/")
		for _, main := range mains {
			cmd := exec.Command("go", "build", "-trimpath", "-o", os.DevNull, main)
			cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s does not build for %s: %v\n%s", main, platform, err, out)
			}
		}
	}
	if got := built["linux/amd64"]; !slices.Equal(got, []string{"./cmd/front", "."}) {
		t.Errorf(".goreleaser.yml builds %v for linux/amd64, want the front and the engine", got)
	}
}

// releasePlatforms returns, by platform (goos/goarch), the main packages .goreleaser.yml's builds
// make for it: each goos with each goarch, but the pairs a build ignores.
func releasePlatforms(t *testing.T) map[string][]string {
	t.Helper()
	b, err := os.ReadFile(".goreleaser.yml")
	if err != nil {
		t.Fatal(err)
	}
	type platform struct{ Goos, Goarch string }
	var release struct {
		Builds []struct {
			Main         string
			Goos, Goarch []string
			Ignore       []platform
		}
	}
	if err := yaml.Unmarshal(b, &release); err != nil {
		t.Fatalf("read .goreleaser.yml: %v", err)
	}
	out := map[string][]string{}
	for _, build := range release.Builds {
		main := build.Main
		if main == "" {
			main = "."
		}
		for _, goos := range build.Goos {
			for _, goarch := range build.Goarch {
				if !slices.Contains(build.Ignore, platform{goos, goarch}) {
					out[goos+"/"+goarch] = append(out[goos+"/"+goarch], main)
				}
			}
		}
	}
	return out
}
