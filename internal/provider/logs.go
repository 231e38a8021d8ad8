package provider

import (
	"strings"
)

// sdkLogLevels are the variables terraform-plugin-go, terraform-plugin-framework and tflog read
// the levels of the provider process's loggers from: the SDK's, its protocol's, the
// framework's and the provider's own (TF_LOG_PROVIDER_ and the name in RegistryAddress).
var sdkLogLevels = []string{
	"TF_LOG_SDK",
	"TF_LOG_SDK_PROTO",
	"TF_LOG_SDK_FRAMEWORK",
	"TF_LOG_PROVIDER_" + strings.ToUpper(RegistryAddress[strings.LastIndex(RegistryAddress, "/")+1:]),
}

// SilenceUnaskedLogs turns the provider process's loggers off when the user asked Terraform for
// no log: neither TF_LOG nor TF_LOG_PROVIDER is set (Terraform passes its environment to the
// provider). Unset, the loggers write every line at TRACE, as JSON, for Terraform to read and
// drop: about a twentieth of a small plan's time. A level the user set is left as it is, and
// with TF_LOG or TF_LOG_PROVIDER set nothing changes.
func SilenceUnaskedLogs(lookup func(string) (string, bool), set func(name, value string) error) error {
	for _, asked := range []string{"TF_LOG", "TF_LOG_PROVIDER"} {
		if value, ok := lookup(asked); ok && value != "" {
			return nil
		}
	}
	for _, name := range sdkLogLevels {
		if _, ok := lookup(name); ok {
			continue
		}
		if err := set(name, "OFF"); err != nil {
			return err
		}
	}
	return nil
}
