// Package chartserver serves the fixture charts of testdata/charts to tests,
// on loopback, the two ways remote charts are published: an HTTP chart
// repository (index.yaml and packages) and an OCI registry (the reference
// distribution registry, in memory). Both can require basic
// authentication.
//
// It is for tests only: every server stops when the test that started it
// ends.
package chartserver
