//go:build !linux

package enginehost

import (
	"errors"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// Serve is Linux's alone: elsewhere the release ships the full provider, with no front.
func Serve(func(string) string, string, func() tfprotov6.ProviderServer) error {
	return errors.New("the provider's shared engine runs on Linux only")
}
