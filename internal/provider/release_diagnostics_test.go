package provider

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/helmrelease"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/release"
)

// diagnosticsHiding returns a builder of diagnostics whose redactor hides sensitive.
func diagnosticsHiding(sensitive ...string) releaseDiagnostics {
	cell := &atomic.Pointer[manifest.Redactor]{}
	cell.Store(manifest.NewRedactor(sensitive))
	return releaseDiagnostics{redactor: cell}
}

// diagnosticConstructors are the framework's ways to make a diagnostic; in the release's files
// only the builder (release_diagnostics.go) may call them.
var diagnosticConstructors = map[string]bool{
	"NewErrorDiagnostic": true, "NewWarningDiagnostic": true,
	"NewAttributeErrorDiagnostic": true, "NewAttributeWarningDiagnostic": true,
	"AddError": true, "AddWarning": true, "AddAttributeError": true, "AddAttributeWarning": true,
}

// Every diagnostic of a release is built by releaseDiagnostics, which redacts it: no release
// file calls the framework's constructors itself, and a diagnostic of the wording shared with
// the environment (a function of another file that returns a diag.Diagnostic) is passed
// through its Redacted.
func TestReleaseDiagnostics_noReleaseFileBypassesTheBuilder(t *testing.T) {
	files, err := filepath.Glob("release*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	shared := sharedDiagnosticFuncs(t, fset)
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "release_diagnostics.go" {
			continue
		}
		file, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		var redactedArgs []ast.Expr
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			switch fn := call.Fun.(type) {
			case *ast.SelectorExpr:
				if diagnosticConstructors[fn.Sel.Name] {
					t.Errorf("%s: %s builds a diagnostic without releaseDiagnostics", fset.Position(call.Pos()), fn.Sel.Name)
				}
				if fn.Sel.Name == "Redacted" || fn.Sel.Name == "RedactedAll" {
					redactedArgs = append(redactedArgs, call.Args...)
				}
			case *ast.Ident:
				if shared[fn.Name] && !containsNode(redactedArgs, call) {
					t.Errorf("%s: %s's diagnostic is not passed through releaseDiagnostics.Redacted", fset.Position(call.Pos()), fn.Name)
				}
			}
			return true
		})
	}
	if checked < 10 || len(shared) == 0 {
		t.Fatalf("checked %d release files and %d shared diagnostic functions; the globs find nothing", checked, len(shared))
	}
}

// sharedDiagnosticFuncs names the functions of the package's other files that return a
// diag.Diagnostic.
func sharedDiagnosticFuncs(t *testing.T, fset *token.FileSet) map[string]bool {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, name := range files {
		if strings.HasPrefix(name, "release") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || fn.Type.Results == nil {
				continue
			}
			for _, result := range fn.Type.Results.List {
				if sel, ok := result.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Diagnostic" {
					out[fn.Name.Name] = true
				}
			}
		}
	}
	return out
}

// containsNode reports whether node is one of exprs.
func containsNode(exprs []ast.Expr, node ast.Node) bool {
	for _, e := range exprs {
		if e == node {
			return true
		}
	}
	return false
}

// A sensitive value inside an error reaches no diagnostic: not the apply's, not the refresh's,
// not one of the shared wording, whatever the error wraps.
func TestReleaseDiagnostics_redactErrors(t *testing.T) {
	const secret = "hunter2-Passw0rd"
	m := &releaseModel{
		Namespace: types.StringValue("review-1"), Name: types.StringValue("web"),
		SetSensitive: types.MapValueMust(types.StringType, map[string]attr.Value{"password": types.StringValue(secret)}),
	}
	quoting := errors.New("admission webhook denied the request: password " + secret + " is weak")
	for name, d := range map[string]diag.Diagnostic{
		"apply":         applyDiagnostic(m.diagnostics(), m.releaseID(), false, &helmrelease.OperationError{Err: quoting}),
		"apply refused": applyRefusedDiagnostic(m, &release.HistoryError{Err: quoting}),
		"render":        renderDiagnostic(m, &release.RenderError{Step: release.StepManifests, Err: quoting}),
		"read":          readDiagnostic(m, &release.ReadError{Step: release.ReadLive, Err: quoting}),
		"plan mismatch": planMismatchDiagnostic(m.diagnostics(), m.releaseID(), quoting),
		"shared":        m.diagnostics().Redacted(connectionDiagnostic(quoting, "release "+m.releaseID())),
		"summary":       m.diagnostics().Warning("Password "+secret, "detail"),
	} {
		if strings.Contains(d.Summary()+d.Detail(), secret) {
			t.Errorf("%s: the diagnostic shows the sensitive value: %s: %s", name, d.Summary(), d.Detail())
		}
		if !strings.Contains(d.Summary()+d.Detail(), "(sensitive value)") {
			t.Errorf("%s: the diagnostic does not say a value was hidden: %s: %s", name, d.Summary(), d.Detail())
		}
	}
}
