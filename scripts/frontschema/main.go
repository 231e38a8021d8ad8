// Command frontschema writes the provider's answer to GetProviderSchema, which the front carries
// (internal/front's schema.pb): run by scripts/generate.sh.
//
//	go run ./scripts/frontschema internal/front/schema.pb
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/enginehost"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/provider"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: frontschema FILE")
		os.Exit(2)
	}
	if err := provider.SilenceUnaskedLogs(os.LookupEnv, os.Setenv); err != nil {
		fmt.Fprintln(os.Stderr, err.Error())
		os.Exit(1)
	}
	b, err := enginehost.SchemaAnswer(context.Background(), provider.RegistryAddress, provider.NewServer("schema"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err.Error())
		os.Exit(1)
	}
	if err := os.WriteFile(os.Args[1], b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err.Error())
		os.Exit(1)
	}
}
