// Package enginehost runs the provider as the engine a command's fronts share (internal/front):
// it listens on the socket the starting front named and serves each connection, one per
// provider process Terraform started, a provider server of its own, as a process of its own would
// have been. It stops once Terraform has exited and no front is connected, or when no front has
// been connected for a while.
package enginehost

import "github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/front"

// Requested reports whether this process was started as a command's engine.
func Requested(getenv func(string) string) bool { return getenv(front.EnvSocket) != "" }
