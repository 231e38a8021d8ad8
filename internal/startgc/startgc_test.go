package startgc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
)

func TestRestore_turnsTheCollectorBackOnAsTheProcessStarted(t *testing.T) {
	// Until Restore, the collector is off (a setting of -1).
	if off := debug.SetGCPercent(-1); off != -1 {
		t.Fatalf("before Restore the collector's setting is %d, want -1 (off)", off)
	}
	Restore()
	want := Serving
	if v, err := strconv.Atoi(os.Getenv("GOGC")); err == nil {
		want = v
	} else if os.Getenv("GOGC") == "off" {
		want = -1
	}
	if got := debug.SetGCPercent(want); got != want {
		t.Errorf("after Restore the collector's setting is %d, want %d (GOGC=%q)", got, want, os.Getenv("GOGC"))
	}
}

// The provider's own setting, where GOGC sets none, and the one GOGC sets otherwise, as the
// provider's binary starts.
func TestRestore_servesWithItsOwnSettingUnlessGOGCSetsOne(t *testing.T) {
	if os.Getenv(restoreChild) != "" {
		Restore()
		fmt.Println(debug.SetGCPercent(-1))
		return
	}
	for gogc, want := range map[string]string{"": "200", "50": "50", "off": "-1"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRestore_servesWithItsOwnSettingUnlessGOGCSetsOne$")
		cmd.Env = append(os.Environ(), restoreChild+"=1", "GOGC="+gogc)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GOGC=%q: %v", gogc, err)
		}
		if got, _, _ := strings.Cut(string(out), "\n"); got != want {
			t.Errorf("GOGC=%q: the collector serves with %q, want %s", gogc, got, want)
		}
	}
}

// restoreChild names the variable that makes the test binary the process whose setting a test
// reads.
const restoreChild = "GITLABK8S_STARTGC_CHILD"

// The provider's binary turns the collector off before it has collected anything: no
// collection ends (GODEBUG=gctrace=1) before this package initializes (inittrace).
func TestOff_beforeAnyCollection(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("builds the provider's binary: runs in the acceptance pass, set TF_ACC=1 to run it")
	}
	bin := filepath.Join(t.TempDir(), "terraform-provider-gitlabk8s")
	if out, err := exec.Command("go", "build", "-o", bin, "../..").CombinedOutput(); err != nil {
		t.Fatalf("build the provider: %v\n%s", err, out)
	}
	cmd := exec.Command(bin)
	// Without Terraform's variables the provider says it is a plugin and ends: every package
	// has been initialized by then. Without PLUGIN_CLIENT_CERT nothing starts a collection on
	// purpose (internal/startwarm).
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1,gctrace=1", "PLUGIN_CLIENT_CERT=")
	out, _ := cmd.CombinedOutput()
	const self = "init github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/startgc "
	var collections []string
	for line := range strings.Lines(string(out)) {
		if strings.HasPrefix(line, self) {
			if len(collections) > 0 {
				t.Errorf("the collector ran before it was turned off:\n%s%s", strings.Join(collections, ""), line)
			}
			return
		}
		if strings.HasPrefix(line, "gc ") {
			collections = append(collections, line)
		}
	}
	t.Fatalf("no initialization of internal/startgc in the binary's trace:\n%s", out)
}
