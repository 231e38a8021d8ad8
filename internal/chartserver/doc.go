// Package chartserver serves the fixture charts of testdata/charts to tests,
// on loopback, the two ways remote charts are published: an HTTP chart
// repository (index.yaml and packages) and an OCI registry (the reference
// distribution registry, in memory). Both serve plain HTTP, or HTTPS with a
// certificate of a CA made for the test (WithTLS, TestCA), and can require
// basic authentication and client certificates.
//
// It is for tests only: every server stops when the test that started it
// ends.
package chartserver
