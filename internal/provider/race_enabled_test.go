//go:build race

package provider

// raceEnabled says whether the tests run under the race detector; the provider binary that the
// CLI-driven tests hand to terraform is then built with it too (buildProviderBinary).
const raceEnabled = true
