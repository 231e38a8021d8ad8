// Command terraform-provider-gitlabk8s serves the gitlabk8s Terraform provider.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/provider"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers like delve")
	flag.Parse()

	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address: provider.RegistryAddress,
		Debug:   debug,
	})
	if err != nil {
		// Not the log package: the provider discards it (helmrelease.DiscardDefaultLogs).
		fmt.Fprintln(os.Stderr, err.Error())
		os.Exit(1)
	}
}
