//go:build !linux

package front

import (
	"fmt"
	"os"
)

// Main is Linux's alone: elsewhere the release ships the full provider under the front's name.
func Main(Hooks) {
	fmt.Fprintln(os.Stderr, "the provider's front runs on Linux only; the package for this system holds the full provider")
	os.Exit(1)
}
