// Package transient decides which failed requests to the API server are worth repeating and
// when: what broke (the connection before the request was sent, the connection after, a
// gateway or an overloaded server), whether the request may be sent again as it is, must first
// be checked for whether it landed, or must not be repeated, and how long to wait between
// attempts. It takes methods, statuses and errors and holds no client; internal/kube carries
// the decisions out in the transport of every client the provider builds.
package transient
