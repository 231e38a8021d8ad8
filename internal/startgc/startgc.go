// Package startgc turns the garbage collector off while the provider's packages initialize,
// and main turns it back on ([Restore]) before serving, with a setting of its own.
//
// Terraform starts the provider three times for a plan and four for an apply, and each start
// initializes every package linked in: Kubernetes' schemes, Helm's, the JSON schema
// compilers. Those allocate about 9 MB, most of it kept, so the collector, starting from a
// 4 MB heap goal, would run three times before the provider answers, to free little.
// Go initializes a package once its imports are, taking the first of those by import path:
// this one waits for runtime/debug, and runs after about 1.5 MB of the 9.4 MB the
// initialization allocates (GODEBUG=inittrace=1), below the 4 MB at which the collector first
// runs, and before the largest allocations (the JSON schema compiler's meta-schemas,
// Kubernetes' schemes). TestOff_beforeAnyCollection checks that the provider's binary
// collects nothing before it.
//
// Serving, the provider collects when its heap has grown by twice what the last collection
// left (Serving, GOGC=200), not by as much as it left (Go's default, 100), unless GOGC says
// otherwise: a plan of a large release allocates many short-lived values (documents parsed,
// objects written, Terraform's values converted), and at a thousand objects the default
// collected a fifth of the plan's CPU time. The heap's peak grows by about a fifth in exchange.
package startgc

import (
	"os"
	"runtime/debug"
)

// Serving is the collector's setting Restore sets where GOGC does not set one.
const Serving = 200

// setting is the collector's setting at start (GOGC, 100 when unset), restored by Restore.
var setting = debug.SetGCPercent(-1)

// Restore turns the collector back on: with the setting GOGC gave the process, or with
// Serving when GOGC is unset or empty.
func Restore() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(Serving)
		return
	}
	debug.SetGCPercent(setting)
}
