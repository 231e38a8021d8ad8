package provider

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The build's identity is the ID Go's own tool reads from the executable.
func TestBuildIdentity_isGosBuildID(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "tool", "buildid", exe).Output()
	if err != nil {
		t.Fatalf("go tool buildid %s: %v", exe, err)
	}
	want := strings.TrimSpace(string(out))
	if got := buildIdentity(); got != want || got == "" {
		t.Errorf("buildIdentity() = %q, want %q", got, want)
	}
}

// Where Go writes the ID at the start of the text (macOS, Windows), it is read from there.
func TestReadBuildID_fromTheStartOfTheText(t *testing.T) {
	file := append(bytes.Repeat([]byte{0}, 3000), "\xff Go build ID: \"abc/def\"\n \xff"...)
	if got := readBuildID(bytes.NewReader(file)); got != "abc/def" {
		t.Errorf("readBuildID = %q, want abc/def", got)
	}
	if got := readBuildID(bytes.NewReader(bytes.Repeat([]byte("Go\x00\x00"), 100))); got != "" {
		t.Errorf("readBuildID of a file with no ID = %q, want none", got)
	}
}
