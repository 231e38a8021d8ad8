// Command terraform-provider-gitlabk8s serves the gitlabk8s Terraform provider.
// Run as `terraform-provider-gitlabk8s report`, it writes the report of a saved
// plan for a merge request instead (internal/reportcmd): a plan job runs the
// binary `terraform init` downloaded, with nothing else to install.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/enginehost"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/provider"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/reportcmd"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/startgc"
	// Work of the start done on the second core while the packages initialize.
	_ "github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/startwarm"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	// The collector was off while the packages initialized (internal/startgc).
	startgc.Restore()
	// Terraform starts a provider without arguments.
	if len(os.Args) > 1 && os.Args[1] == reportcmd.Name {
		os.Exit(reportcmd.Run(context.Background(), os.Args[2:], os.Getenv,
			reportcmd.IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}))
	}
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers like delve")
	flag.Parse()

	if err := provider.SilenceUnaskedLogs(os.LookupEnv, os.Setenv); err != nil {
		fmt.Fprintln(os.Stderr, err.Error())
		os.Exit(1)
	}
	if enginehost.Requested(os.Getenv) {
		// Started by a front (internal/front) as the engine its command's provider processes share.
		if err := enginehost.Serve(os.Getenv, provider.RegistryAddress, provider.NewServer(version)); err != nil {
			fmt.Fprintln(os.Stderr, err.Error())
			os.Exit(1)
		}
		return
	}
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
