// Command front is the provider binary a released package holds on Linux, named
// terraform-provider-gitlabk8s_v<version>: it passes Terraform's calls to the engine beside it,
// gitlabk8s-engine_v<version> (the repository's main package), one engine for all the provider
// processes of a Terraform command (internal/front).
package main

import "github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/front"

func main() { front.Main(front.Hooks{}) }
