package startwarm

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// smapsShare returns the share of b that field (Rss:, AnonHugePages:) of /proc/self/smaps counts
// for the mapping that starts at b.
func smapsShare(t *testing.T, b []byte, field string) float64 {
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
		if v, ok := strings.CutPrefix(line, field); in && ok {
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

// residentShare is the share of b's pages resident in memory, by mincore(2): exactly b's, where
// smaps gives the whole area b lies in, which the kernel may have merged with a neighbouring
// mapping holding pages of its own.
func residentShare(t *testing.T, b []byte) float64 {
	t.Helper()
	pages := (len(b) + os.Getpagesize() - 1) / os.Getpagesize()
	vec := make([]byte, pages)
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0])))
	if errno != 0 {
		t.Fatal(errno)
	}
	resident := 0
	for _, v := range vec {
		resident += int(v & 1)
	}
	return float64(resident) / float64(pages)
}

// anonymous maps 16 MiB of fresh anonymous memory, unmapped when the test ends.
func anonymous(t *testing.T) []byte {
	t.Helper()
	b, err := unix.Mmap(-1, 0, 16<<20, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Munmap(b) })
	return b
}

// populateOrSkip populates b, and skips the test where the kernel cannot.
func populateOrSkip(t *testing.T, b []byte) {
	t.Helper()
	if err := populate(b); errors.Is(err, unix.EINVAL) {
		t.Skipf("this kernel has no MADV_POPULATE_WRITE (Linux 5.14 and later have): %v", err)
	} else if err != nil {
		t.Fatal(err)
	}
}

// Anonymous memory populated is mapped at once; fresh, it is not until written.
func TestPopulate_mapsAnonymousMemoryAtOnce(t *testing.T) {
	b := anonymous(t)
	if m := residentShare(t, b); m != 0 {
		t.Fatalf("%.0f%% of an untouched mapping is mapped before it is populated: the test cannot tell", 100*m)
	}
	populateOrSkip(t, b)
	if m := residentShare(t, b); m < 1 {
		t.Errorf("%.0f%% of the mapping is mapped once populated, want all of it", 100*m)
	}
	if err := populateHeap(1 << 20); err != nil {
		t.Errorf("populateHeap: %v", err)
	}
}

// Where the kernel gives huge pages to the memory that asks for them (transparent_hugepage
// "madvise"), the heap populated ahead is in huge pages: 6 faults instead of 3,000.
func TestPopulate_asksForHugePages(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		t.Skipf("this kernel has no transparent huge pages: %v", err)
	}
	if !strings.Contains(string(mode), "[madvise]") {
		t.Skipf("transparent huge pages are %q here: the test needs \"[madvise]\" to tell whether populate asks for them", strings.TrimSpace(string(mode)))
	}
	b := anonymous(t)
	fallbacks := thpFaultFallbacks(t)
	populateOrSkip(t, b)
	// 16 MiB hold at least seven whole huge pages, wherever they start.
	if huge := smapsShare(t, b, "AnonHugePages:"); huge < 7.0/8 {
		// A huge page asked for and not found is counted as a fallback; one never asked for is not.
		if more := thpFaultFallbacks(t) - fallbacks; more > 0 {
			t.Skipf("%.0f%% of the populated mapping is in huge pages: the kernel found no free huge page %d times meanwhile (thp_fault_fallback), so the test cannot tell", 100*huge, more)
		}
		t.Errorf("%.0f%% of the populated mapping is in huge pages, want at least 7 of its 8 huge pages' worth", 100*huge)
	}
}

// thpFaultFallbacks returns how many times the kernel found no huge page for a fault that asked
// for one (thp_fault_fallback in /proc/vmstat, counted for the whole machine).
func thpFaultFallbacks(t *testing.T) int {
	t.Helper()
	vmstat, err := os.ReadFile("/proc/vmstat")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(vmstat)) {
		if v, ok := strings.CutPrefix(line, "thp_fault_fallback "); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no thp_fault_fallback in /proc/vmstat")
	return 0
}
