package provider

import (
	"sync/atomic"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// releaseDiagnostics builds every diagnostic of a release. Each summary and detail passes the
// release's redactor as it is when the diagnostic is built (redactorFor: the latest
// rendering's once the release has rendered), so no diagnostic of a release shows what its
// redactor hides, whatever error text it quotes. The zero value redacts nothing: it is for
// diagnostics about a release's configuration before there is one (a validator's).
type releaseDiagnostics struct {
	redactor *atomic.Pointer[manifest.Redactor]
}

// noRelease builds the diagnostics of a configuration before there is a release to redact
// for (an import ID, a validator's): they quote no sensitive value.
var noRelease releaseDiagnostics

// diagnostics returns the builder of m's diagnostics.
func (m *releaseModel) diagnostics() releaseDiagnostics {
	return releaseDiagnostics{redactor: m.redactorCell()}
}

// redact hides in s what the release's redactor hides.
func (d releaseDiagnostics) redact(s string) string {
	if d.redactor == nil {
		return s
	}
	return d.redactor.Load().String(s)
}

// Error is an error diagnostic of the release.
func (d releaseDiagnostics) Error(summary, detail string) diag.Diagnostic {
	return diag.NewErrorDiagnostic(d.redact(summary), d.redact(detail))
}

// Warning is a warning diagnostic of the release.
func (d releaseDiagnostics) Warning(summary, detail string) diag.Diagnostic {
	return diag.NewWarningDiagnostic(d.redact(summary), d.redact(detail))
}

// AttributeError is an error diagnostic of the release at the attribute at.
func (d releaseDiagnostics) AttributeError(at path.Path, summary, detail string) diag.Diagnostic {
	return diag.NewAttributeErrorDiagnostic(at, d.redact(summary), d.redact(detail))
}

// AttributeWarning is a warning diagnostic of the release at the attribute at.
func (d releaseDiagnostics) AttributeWarning(at path.Path, summary, detail string) diag.Diagnostic {
	return diag.NewAttributeWarningDiagnostic(at, d.redact(summary), d.redact(detail))
}

// Redacted is in, a diagnostic of the wording shared with the environment (diagnostics.go),
// redacted as the release's own are.
func (d releaseDiagnostics) Redacted(in diag.Diagnostic) diag.Diagnostic {
	var out diag.Diagnostic = diag.NewWarningDiagnostic(d.redact(in.Summary()), d.redact(in.Detail()))
	if in.Severity() == diag.SeverityError {
		out = diag.NewErrorDiagnostic(d.redact(in.Summary()), d.redact(in.Detail()))
	}
	if withPath, ok := in.(diag.DiagnosticWithPath); ok {
		out = diag.WithPath(withPath.Path(), out)
	}
	return out
}

// RedactedAll is Redacted for each of in.
func (d releaseDiagnostics) RedactedAll(in diag.Diagnostics) diag.Diagnostics {
	out := make(diag.Diagnostics, 0, len(in))
	for _, each := range in {
		out = append(out, d.Redacted(each))
	}
	return out
}
