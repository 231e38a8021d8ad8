package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chart"
)

// How a release reaches its chart repository or OCI registry: the attributes, their
// validate-time checks, and what a failure to connect tells the user to set.

// tlsAttributePaths names the attributes of each file of a chart.TLS.
var tlsAttributePaths = map[chart.TLSFile]string{
	chart.TLSFileCA:   "repository_ca_file",
	chart.TLSFileCert: "repository_cert_file",
	chart.TLSFileKey:  "repository_key_file",
}

const repositoryTLSScope = "It applies to the HTTPS chart repository or OCI registry of `chart`, and to the repositories and " +
	"registries of the dependencies `dependency_update` fetches."

func plainHTTPAttribute() schema.Attribute {
	return schema.BoolAttribute{
		Optional: true,
		Computed: true,
		Default:  booldefault.StaticBool(false),
		MarkdownDescription: "Talk to OCI registries (the chart's, and those of the dependencies `dependency_update` fetches) over " +
			"plain HTTP instead of HTTPS, like `helm --plain-http`. Default `false`: every registry, one on `localhost` too, is " +
			"reached over HTTPS, and a registry that answers plain HTTP fails the plan with a message saying to set it. HTTP(S) " +
			"chart repositories use their URL's scheme instead; `plain_http` cannot be combined with an `http(s)://` `repository`, " +
			"nor, for a chart in a registry, with the TLS attributes.",
		Validators: []validator.Bool{plainHTTPValidator{}},
	}
}

func repositoryCAFileAttribute() schema.Attribute {
	return schema.StringAttribute{
		Optional: true,
		MarkdownDescription: "Path of a PEM file of one or more CA certificates to trust, in addition to the system's, for a " +
			"repository whose certificate a private CA signed (`helm --ca-file`). In GitLab CI, a variable of type File gives such " +
			"a path. " + repositoryTLSScope + " The file is checked at validate time.",
		Validators: []validator.String{caFileValidator{}},
	}
}

func repositoryCertFileAttribute() schema.Attribute {
	return schema.StringAttribute{
		Optional: true,
		MarkdownDescription: "Path of a PEM client certificate to present to a repository that requires one (`helm --cert-file`); " +
			"set `repository_key_file` with it. " + repositoryTLSScope,
		Validators: []validator.String{
			stringvalidator.AlsoRequires(path.MatchRoot("repository_key_file")),
			clientCertificateValidator{},
		},
	}
}

func repositoryKeyFileAttribute() schema.Attribute {
	return schema.StringAttribute{
		Optional: true,
		MarkdownDescription: "Path of the PEM private key of `repository_cert_file` (`helm --key-file`). The key is read only to " +
			"connect; it never appears in plans or logs.",
		Validators: []validator.String{stringvalidator.AlsoRequires(path.MatchRoot("repository_cert_file"))},
	}
}

func insecureSkipTLSVerifyAttribute() schema.Attribute {
	return schema.BoolAttribute{
		Optional: true,
		Computed: true,
		Default:  booldefault.StaticBool(false),
		MarkdownDescription: "Accept any certificate from the repository, like `helm --insecure-skip-tls-verify`: the connection " +
			"is still encrypted, but anyone on the path can pose as the repository and serve another chart. Prefer " +
			"`repository_ca_file`. " + repositoryTLSScope + " Default `false`.",
	}
}

// chartTLS is how the release's chart and its dependencies are reached over HTTPS.
func (m *releaseModel) chartTLS() chart.TLS {
	return chart.TLS{
		CAFile:             m.RepositoryCAFile.ValueString(),
		CertFile:           m.RepositoryCertFile.ValueString(),
		KeyFile:            m.RepositoryKeyFile.ValueString(),
		InsecureSkipVerify: m.InsecureSkipTLSVerify.ValueBool(),
	}
}

// tlsFileDiagnostic points a *chart.TLSFileError at its attribute.
func tlsFileDiagnostic(d releaseDiagnostics, fileErr *chart.TLSFileError) diag.Diagnostic {
	attribute := tlsAttributePaths[fileErr.File]
	return d.AttributeError(path.Root(attribute), "Invalid "+titleFile(fileErr.File), fmt.Sprintf(
		"%s cannot be used: set it to the path of a readable PEM file (%s).\n\n%v", attribute, pemWanted(fileErr.File), fileErr))
}

func titleFile(file chart.TLSFile) string {
	switch file {
	case chart.TLSFileCA:
		return "Repository CA File"
	case chart.TLSFileCert:
		return "Repository Certificate File"
	}
	return "Repository Key File"
}

func pemWanted(file chart.TLSFile) string {
	switch file {
	case chart.TLSFileCA:
		return "one or more -----BEGIN CERTIFICATE----- blocks of the CA that signed the repository's certificate"
	case chart.TLSFileCert:
		return "a -----BEGIN CERTIFICATE----- block, the client certificate"
	}
	return "a -----BEGIN PRIVATE KEY----- block, the key of repository_cert_file"
}

// repositoryConnectionDiagnostic says which attribute fixes a failure to reach the chart's repository
// or registry, or false when err is no such failure. d builds it.
func repositoryConnectionDiagnostic(d releaseDiagnostics, m *releaseModel, err error) (diag.Diagnostic, bool) {
	var fileErr *chart.TLSFileError
	if errors.As(err, &fileErr) {
		return tlsFileDiagnostic(d, fileErr), true
	}
	var tlsErr *chart.TLSError
	if !errors.As(err, &tlsErr) {
		return nil, false
	}
	id, message := m.releaseID(), err.Error()
	switch tlsErr.Kind {
	case chart.UnknownAuthority:
		return d.AttributeError(path.Root("repository_ca_file"), "Untrusted Repository Certificate", fmt.Sprintf(
			"The chart of release %s could not be fetched: the certificate of %s is signed by a certificate authority this machine "+
				"does not trust (x509: certificate signed by unknown authority), as with a private CA or a self-signed certificate. "+
				"Set repository_ca_file to the path of a PEM file of that CA (in GitLab CI, a variable of type File), or, to skip "+
				"the check, insecure_skip_tls_verify = true.\n\n%s", id, tlsErr.Host, message)), true
	case chart.InvalidCertificate:
		return d.AttributeError(path.Root("repository"), "Invalid Repository Certificate", fmt.Sprintf(
			"The chart of release %s could not be fetched: the certificate of %s is not valid for it (another host name, expired, "+
				"or not a server certificate). Use the host name the certificate names, have the certificate renewed, or set "+
				"insecure_skip_tls_verify = true to skip the check.\n\n%s", id, tlsErr.Host, message)), true
	case chart.ServerSpeaksHTTP:
		if isHTTPRepository(m) {
			return d.AttributeError(path.Root("repository"), "Repository Speaks Plain HTTP", fmt.Sprintf(
				"The chart of release %s could not be fetched: %s answers plain HTTP, not HTTPS. Use an http:// repository URL.\n\n%s",
				id, tlsErr.Host, message)), true
		}
		return d.AttributeError(path.Root("plain_http"), "Registry Speaks Plain HTTP", fmt.Sprintf(
			"The chart of release %s could not be fetched: %s answers plain HTTP, not HTTPS. Registries are reached over HTTPS, one "+
				"on localhost too; set plain_http = true for this one, as helm --plain-http.\n\n%s", id, tlsErr.Host, message)), true
	case chart.ServerSpeaksHTTPS:
		if isHTTPRepository(m) {
			return d.AttributeError(path.Root("repository"), "Repository Speaks HTTPS", fmt.Sprintf(
				"The chart of release %s could not be fetched: %s answers HTTPS, not plain HTTP. Use an https:// repository URL.\n\n%s",
				id, tlsErr.Host, message)), true
		}
		return d.AttributeError(path.Root("plain_http"), "Registry Speaks HTTPS", fmt.Sprintf(
			"The chart of release %s could not be fetched: %s answers HTTPS, not plain HTTP. Remove plain_http = true (and set "+
				"repository_ca_file if a private CA signed its certificate).\n\n%s", id, tlsErr.Host, message)), true
	}
	return nil, false
}

// isHTTPRepository reports whether the chart comes from an HTTP(S) chart repository.
func isHTTPRepository(m *releaseModel) bool {
	r := m.Repository.ValueString()
	return strings.HasPrefix(r, "http://") || strings.HasPrefix(r, "https://")
}

// caFileValidator checks repository_ca_file is a readable PEM bundle of certificates.
type caFileValidator struct{}

var _ validator.String = caFileValidator{}

func (caFileValidator) Description(context.Context) string {
	return "the path of a PEM file of CA certificates"
}

func (v caFileValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (caFileValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if _, err := chart.ReadCABundle(req.ConfigValue.ValueString()); err != nil {
		appendTLSFileError(&resp.Diagnostics, err)
	}
}

// clientCertificateValidator checks repository_cert_file and repository_key_file are a PEM
// certificate and its key.
type clientCertificateValidator struct{}

var _ validator.String = clientCertificateValidator{}

func (clientCertificateValidator) Description(context.Context) string {
	return "the path of a PEM client certificate that repository_key_file holds the key of"
}

func (v clientCertificateValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (clientCertificateValidator) ValidateString(ctx context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	var key types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("repository_key_file"), &key)...)
	if key.IsNull() || key.IsUnknown() {
		return // AlsoRequires names a missing key
	}
	if _, err := chart.ReadClientCertificate(req.ConfigValue.ValueString(), key.ValueString()); err != nil {
		appendTLSFileError(&resp.Diagnostics, err)
	}
}

func appendTLSFileError(diags *diag.Diagnostics, err error) {
	var fileErr *chart.TLSFileError
	if errors.As(err, &fileErr) {
		diags.Append(tlsFileDiagnostic(noRelease, fileErr))
		return
	}
	diags.Append(noRelease.Error("Invalid Repository TLS File", err.Error()))
}

// plainHTTPValidator refuses plain_http = true together with what only HTTPS uses.
type plainHTTPValidator struct{}

var _ validator.Bool = plainHTTPValidator{}

func (plainHTTPValidator) Description(context.Context) string {
	return "plain_http excludes an https:// repository and the TLS attributes"
}

func (v plainHTTPValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (plainHTTPValidator) ValidateBool(ctx context.Context, req validator.BoolRequest, resp *validator.BoolResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() || !req.ConfigValue.ValueBool() {
		return
	}
	var conflicting []string
	for _, name := range []string{"repository_ca_file", "repository_cert_file", "repository_key_file"} {
		var v types.String
		resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root(name), &v)...)
		if !v.IsNull() {
			conflicting = append(conflicting, name)
		}
	}
	var insecure types.Bool
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("insecure_skip_tls_verify"), &insecure)...)
	if insecure.ValueBool() {
		conflicting = append(conflicting, "insecure_skip_tls_verify")
	}
	var chartRef, repository types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("chart"), &chartRef)...)
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("repository"), &repository)...)
	// A chart directory's dependencies may come from an HTTPS repository and a plain-HTTP
	// registry at once; a chart from a registry has only the registry.
	fromRegistry := strings.HasPrefix(chartRef.ValueString(), "oci://") || strings.HasPrefix(repository.ValueString(), "oci://")
	if len(conflicting) > 0 && fromRegistry {
		names := strings.Join(conflicting, ", ")
		resp.Diagnostics.Append(noRelease.AttributeError(req.Path, "Conflicting Repository Settings", fmt.Sprintf(
			"plain_http = true talks to the chart's registry without TLS, so %s would never be used. Remove plain_http for a registry "+
				"that speaks HTTPS, or remove %s for one that speaks plain HTTP.", names, names)))
	}
	if strings.HasPrefix(repository.ValueString(), "https://") || strings.HasPrefix(repository.ValueString(), "http://") {
		resp.Diagnostics.Append(noRelease.AttributeError(req.Path, "Conflicting Repository Settings",
			"plain_http applies to OCI registries; an HTTP chart repository is reached with its URL's scheme. Remove "+
				"plain_http, and write http:// in repository for a repository that speaks plain HTTP."))
	}
}
