// Package faultproxy puts a TCP proxy between a client and the local API server, the way the
// GitLab agent's tunnel sits between a CI job and a cluster, and breaks its connections on a
// schedule a test sets: it resets every open connection, or stalls them. TLS passes through
// untouched, so a kubeconfig pointed at the proxy trusts the API server as before.
//
// The connections are Shopify's toxiproxy's; this package only schedules its faults.
// Production code never imports it.
package faultproxy
