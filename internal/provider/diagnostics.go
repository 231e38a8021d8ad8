package provider

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/kube"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/refusal"
)

// This file builds the diagnostics shared by resources: one place, one wording.

// providerDataFrom checks ProviderData's type. It is never nil: before the provider is
// configured (during validation, where that is not an error) it is the data of a provider
// that connects to nothing (configured reports false, connect returns errNotConfigured).
func providerDataFrom(data any, diags *diag.Diagnostics) *providerData {
	if data == nil {
		return &providerData{}
	}
	pd, ok := data.(*providerData)
	if !ok {
		diags.AddError("Unexpected Provider Data",
			fmt.Sprintf("Expected *providerData, got %T. This is a bug in the provider; please report it.", data))
		return &providerData{}
	}
	return pd
}

// configured reports whether the provider's Configure gave d: a connection, or the reason
// there is none.
func (d *providerData) configured() bool { return d.conn != nil }

// clients connects to the cluster for need (what is being done, as "reading the environment
// review/x"), or adds a diagnostic that names it with the host and the context.
func (d *providerData) clients(ctx context.Context, need string, diags *diag.Diagnostics) *kube.Clients {
	c, err := d.connect(ctx)
	if err != nil {
		diags.Append(connectionDiagnostic(err, need))
		return nil
	}
	return c
}

// readEarly connects to the cluster for need as clients does, and calls read with the
// connection's clients while its probe is under way (kube.Connection.Early): through the
// GitLab agent's tunnel the probe is a round trip. When the probe finds no server, read's
// requests are cancelled and the probe's failure is the diagnostic; read's answers are then
// not used.
func (d *providerData) readEarly(ctx context.Context, need string, diags *diag.Diagnostics, read func(context.Context, *kube.Clients)) *kube.Clients {
	if !d.configured() {
		diags.Append(connectionDiagnostic(errNotConfigured, need))
		return nil
	}
	c, wait, err := d.conn.Early(ctx)
	if err != nil {
		diags.Append(connectionDiagnostic(err, need))
		return nil
	}
	readCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		if wait(readCtx) != nil {
			cancel()
		}
	}()
	read(readCtx, c)
	if err := wait(ctx); err != nil {
		diags.Append(connectionDiagnostic(err, need))
		return nil
	}
	return c
}

// connect connects to the cluster, or says why not (errNotConfigured before Configure gave
// the provider's data); connectionDiagnostic words the error.
func (d *providerData) connect(ctx context.Context) (*kube.Clients, error) {
	if !d.configured() {
		return nil, errNotConfigured
	}
	return d.conn.Clients(ctx)
}

// kubeConfigError is a provider configuration from which no Kubernetes client can be built.
// Configure keeps it in the connection rather than failing, so what needs no cluster (a plan
// with kube_version set) still works; the first operation that needs the cluster reports it.
type kubeConfigError struct {
	// setting is what the configuration came from: "host", "config_path", "config_context" or "$KUBECONFIG".
	setting string
	err     error
}

func (e *kubeConfigError) Error() string { return e.err.Error() }
func (e *kubeConfigError) Unwrap() error { return e.err }

func connectionDiagnostic(err error, need string) diag.Diagnostic {
	var unreachable *kube.UnreachableError
	var config *kubeConfigError
	switch {
	case errors.Is(err, errNotConfigured):
		return diag.NewErrorDiagnostic("Provider Not Configured", errNotConfigured.Error())
	case errors.As(err, &unreachable):
		return diag.NewErrorDiagnostic("Unable to Reach Kubernetes Cluster", fmt.Sprintf(
			"%s needs the cluster, and the API server at %s did not answer. Check that the cluster is running and reachable from this job, "+
				"and that config_context (or the kubeconfig's current context) points at the right cluster.\n\n%v",
			capitalize(need), unreachable.Source, unreachable.Err))
	case errors.As(err, &config) && config.setting != "":
		return diag.NewErrorDiagnostic("Invalid Kubernetes Configuration", fmt.Sprintf(
			"%s needs the cluster, and the provider cannot build a Kubernetes client from its configuration (%s). Check config_path, "+
				"config_context, $KUBECONFIG or host and its credentials. A plan that needs no cluster (kube_version set) does not connect.\n\n%v",
			capitalize(need), config.setting, err))
	case errors.Is(err, kube.ErrNoConfiguration):
		return diag.NewErrorDiagnostic("No Kubernetes Configuration", capitalize(need)+" needs the cluster, and the provider found none to connect to. Set config_path, "+
			"$KUBECONFIG, or host with credentials in the provider block (or the GITLABK8S_* environment variables).\n\n"+err.Error())
	default:
		return diag.NewErrorDiagnostic("Unable to Connect to Kubernetes", capitalize(need)+" needs the cluster, and the provider could not create a Kubernetes client.\n\n"+err.Error())
	}
}

func sortedStrings(s []string) []string {
	sort.Strings(s)
	return s
}

// refuser names who refused an object, from the API server's answer, for a diagnostic's
// sentence: `the admission webhook "deny.example.com"`, `Pod Security admission`, `the API
// server (invalid)`.
func refuser(refused *kube.RefusedError) string {
	switch refused.Class {
	case refusal.Webhook, refusal.DryRunUnsupported:
		return fmt.Sprintf("the admission webhook %q", refused.Webhook)
	case refusal.Policy:
		return fmt.Sprintf("the ValidatingAdmissionPolicy %q", refused.Policy)
	case refusal.PodSecurity:
		return "Pod Security admission"
	case refusal.Quota:
		return "a ResourceQuota of the namespace"
	case refusal.Admission:
		return "an admission plugin of the API server"
	case refusal.NamespaceTerminating:
		return "the API server, because the namespace is being deleted,"
	case refusal.Other:
		if refused.Reason == "" {
			return "the API server"
		}
		return fmt.Sprintf("the API server (%s)", refused.Reason)
	}
	return fmt.Sprintf("the API server (%s)", refused.Class)
}
