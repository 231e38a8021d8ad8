package startwarm

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
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

// mapped returns the share of b's pages this process has mapped (the Rss of /proc/self/smaps for
// the mapping that starts at b).
func mapped(t *testing.T, b []byte) float64 {
	t.Helper()
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	start := strconv.FormatUint(uint64(uintptr(unsafe.Pointer(&b[0]))), 16) + "-"
	var in bool
	for line := range strings.Lines(string(smaps)) {
		if strings.HasPrefix(line, start) {
			in = true
			continue
		}
		if v, ok := strings.CutPrefix(line, "Rss:"); in && ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				t.Fatal(err)
			}
			return float64(kb*1024) / float64(len(b))
		}
	}
	t.Fatalf("no mapping starts at %s in /proc/self/smaps", start)
	return 0
}

// checkPopulates fails t unless none of b is mapped before populate and all of it after.
func checkPopulates(t *testing.T, b []byte, populate func() error) {
	t.Helper()
	if m := mapped(t, b); m != 0 {
		t.Fatalf("%.0f%% of an untouched mapping is mapped before it is populated: the test cannot tell", 100*m)
	}
	if err := populate(); errors.Is(err, unix.EINVAL) {
		t.Skipf("this kernel has no MADV_POPULATE_READ and _WRITE (Linux 5.14 and later have): %v", err)
	} else if err != nil {
		t.Fatal(err)
	}
	if m := mapped(t, b); m < 1 {
		t.Errorf("%.0f%% of the mapping is mapped once populated, want all of it", 100*m)
	}
}

// Anonymous memory populated is mapped at once; fresh, it is not until written.
func TestPopulate_mapsAnonymousMemoryAtOnce(t *testing.T) {
	b, err := unix.Mmap(-1, 0, 16<<20, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = unix.Munmap(b) }()
	checkPopulates(t, b, func() error { return populate(b) })
	if err := populateHeap(1 << 20); err != nil {
		t.Errorf("populateHeap: %v", err)
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
