package provider

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/kube"
)

// This file builds the diagnostics shared by resources: one place, one wording.

// providerDataFrom checks ProviderData's type; it is nil before the provider is configured
// (during validation), which is not an error.
func providerDataFrom(data any, diags *diag.Diagnostics) *providerData {
	if data == nil {
		return nil
	}
	pd, ok := data.(*providerData)
	if !ok {
		diags.AddError("Unexpected Provider Data",
			fmt.Sprintf("Expected *providerData, got %T. This is a bug in the provider; please report it.", data))
		return nil
	}
	return pd
}

// clients connects to the cluster, or adds a diagnostic that names the host and the context.
func (d *providerData) clients(ctx context.Context, diags *diag.Diagnostics) *kube.Clients {
	if d == nil || d.conn == nil {
		diags.AddError("Provider Not Configured", errNotConfigured.Error())
		return nil
	}
	c, err := d.conn.Clients(ctx)
	if err != nil {
		diags.Append(connectionDiagnostic(err))
		return nil
	}
	return c
}

func connectionDiagnostic(err error) diag.Diagnostic {
	var unreachable *kube.UnreachableError
	switch {
	case errors.As(err, &unreachable):
		return diag.NewErrorDiagnostic("Unable to Reach Kubernetes Cluster", fmt.Sprintf(
			"The API server at %s did not answer. Check that the cluster is running and reachable from this job, "+
				"and that config_context (or the kubeconfig's current context) points at the right cluster.\n\n%v",
			unreachable.Source, unreachable.Err))
	case errors.Is(err, kube.ErrNoConfiguration):
		return diag.NewErrorDiagnostic("No Kubernetes Configuration", "The provider found no cluster to connect to. Set config_path, "+
			"$KUBECONFIG, or host with credentials in the provider block (or the GITLABK8S_* environment variables).\n\n"+err.Error())
	default:
		return diag.NewErrorDiagnostic("Unable to Connect to Kubernetes", "The provider could not create a Kubernetes client.\n\n"+err.Error())
	}
}

func sortedStrings(s []string) []string {
	sort.Strings(s)
	return s
}
