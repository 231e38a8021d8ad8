//go:build !linux

package front

import (
	"fmt"
	"os"
)

// Hooks let a build of the front run code of its own before the process exits.
type Hooks struct {
	// AtExit runs once, before the front exits on its own.
	AtExit func()
}

// Main is Linux's alone: elsewhere the release ships the full provider under the front's name.
func Main(Hooks) {
	fmt.Fprintln(os.Stderr, "the provider's front runs on Linux only; the package for this system holds the full provider")
	os.Exit(1)
}
