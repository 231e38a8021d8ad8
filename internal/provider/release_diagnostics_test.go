package provider

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	rcommon "helm.sh/helm/v4/pkg/release/common"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/helmrelease"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/kube"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/readiness"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/refusal"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/release"
)

// diagnosticsHiding returns a builder of diagnostics whose redactor hides sensitive.
func diagnosticsHiding(sensitive ...string) releaseDiagnostics {
	cell := &atomic.Pointer[manifest.Redactor]{}
	cell.Store(manifest.NewRedactor(sensitive, nil, nil))
	return releaseDiagnostics{redactor: cell}
}

// diagnosticConstructors are the framework's ways to make a diagnostic; in the release's files
// only the builder (release_diagnostics.go) may call them.
var diagnosticConstructors = map[string]bool{
	"NewErrorDiagnostic": true, "NewWarningDiagnostic": true,
	"NewAttributeErrorDiagnostic": true, "NewAttributeWarningDiagnostic": true,
	"AddError": true, "AddWarning": true, "AddAttributeError": true, "AddAttributeWarning": true,
}

// diagnosticsAddedUnredacted are the functions of other files that add to a *diag.Diagnostics
// and that a release file may call all the same, with why what they add needs no redaction.
var diagnosticsAddedUnredacted = map[string]string{
	"providerDataFrom": "its one diagnostic, provider data of an unexpected type, quotes only a Go type",
}

// Every diagnostic of a release is built by releaseDiagnostics, which redacts it: no release
// file calls the framework's constructors itself, a diagnostic of the wording shared with
// the environment (a function of another file that returns a diag.Diagnostic) is passed
// through its Redacted, and no release file hands its diagnostics to a function of another
// file that adds to them (providerData.clients: a release connects with providerData.connect
// and words the error through the builder).
func TestReleaseDiagnostics_noReleaseFileBypassesTheBuilder(t *testing.T) {
	files, err := filepath.Glob("release*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	shared, adding := sharedDiagnosticFuncs(t, fset)
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
			if name := calledName(call); adding[name] && diagnosticsAddedUnredacted[name] == "" {
				t.Errorf("%s: %s adds diagnostics that releaseDiagnostics never sees", fset.Position(call.Pos()), name)
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
	if checked < 10 || len(shared) == 0 || !adding["clients"] {
		t.Fatalf("checked %d release files, %d shared diagnostic functions and %d that add diagnostics; the globs find nothing",
			checked, len(shared), len(adding))
	}
}

// calledName is the name of the function or method call calls, "" for a call of a value.
func calledName(call *ast.CallExpr) string {
	switch fn := call.Fun.(type) {
	case *ast.SelectorExpr:
		return fn.Sel.Name
	case *ast.Ident:
		return fn.Name
	}
	return ""
}

// sharedDiagnosticFuncs names the functions of the package's other files that return a
// diag.Diagnostic (shared), and the functions and methods that take a *diag.Diagnostics to
// add to (adding).
func sharedDiagnosticFuncs(t *testing.T, fset *token.FileSet) (shared, adding map[string]bool) {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	out, adding := map[string]bool{}, map[string]bool{}
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
			if !ok {
				continue
			}
			for _, param := range fn.Type.Params.List {
				if star, ok := param.Type.(*ast.StarExpr); ok && isDiagSelector(star.X, "Diagnostics") {
					adding[fn.Name.Name] = true
				}
			}
			if fn.Recv != nil || fn.Type.Results == nil {
				continue
			}
			for _, result := range fn.Type.Results.List {
				if sel, ok := result.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Diagnostic" {
					out[fn.Name.Name] = true
				}
			}
		}
	}
	return out, adding
}

// isDiagSelector reports whether e is diag.<name>.
func isDiagSelector(e ast.Expr, name string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != name {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "diag"
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

// The provider words how atomic undid a failed revision from helmrelease.Undo: the apply's and
// the test's diagnostics name the uninstall or the revision rolled back to, and claim nothing
// when the undo failed, which the error quoted below says.
func TestReleaseDiagnostics_atomicUndo(t *testing.T) {
	cause := errors.New("Deployment.apps/web: CrashLoopBackOff")
	const said = "Because atomic is set"
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"install", &helmrelease.OperationError{Operation: "install", Err: cause, Undo: helmrelease.Undo{Action: helmrelease.UndoUninstall}},
			said + ", the release was uninstalled."},
		{"upgrade", &helmrelease.OperationError{Operation: "upgrade", Err: cause, Undo: helmrelease.Undo{Action: helmrelease.UndoRollback, Revision: 3}},
			said + ", the release was rolled back to revision 3."},
		{"test", &helmrelease.TestError{Err: cause, Undo: helmrelease.Undo{Action: helmrelease.UndoRollback, Revision: 2}},
			said + ", the release was rolled back to revision 2."},
		{"undo failed", &helmrelease.OperationError{Operation: "upgrade", Err: cause,
			Undo: helmrelease.Undo{Action: helmrelease.UndoRollback, Err: errors.New("no earlier successful revision to roll back to")}}, ""},
		{"not atomic", &helmrelease.TestError{Err: cause}, ""},
	} {
		detail := applyDiagnostic(diagnosticsHiding(), "review-1/web", false, tt.err).Detail()
		first, _, _ := strings.Cut(detail, "\n\n")
		switch {
		case tt.want == "" && strings.Contains(first, said):
			t.Errorf("%s: the diagnostic says the release was undone: %s", tt.name, first)
		case tt.want != "" && !strings.Contains(first, tt.want):
			t.Errorf("%s: the diagnostic's sentences are %q, want %q", tt.name, first, tt.want)
		}
	}
}

func TestReleaseDiagnostics_recovered(t *testing.T) {
	for _, tt := range []struct {
		done helmrelease.Recovered
		want string
	}{
		{helmrelease.Recovered{Action: helmrelease.RecoveryUninstall, Status: rcommon.StatusPendingInstall, Revision: 1},
			"release was pending-install at revision 1; it was uninstalled and installed again."},
		{helmrelease.Recovered{Action: helmrelease.RecoveryRollback, Status: rcommon.StatusPendingUpgrade, Revision: 3, RolledBackTo: 2},
			"release was pending-upgrade at revision 3; it was rolled back to revision 2 and upgraded."},
		{helmrelease.Recovered{Action: helmrelease.RecoveryMarkFailed, Status: rcommon.StatusPendingUpgrade, Revision: 2},
			"release was pending-upgrade at revision 2; that revision was marked failed and the release upgraded."},
	} {
		got := recoveredWarning(diagnosticsHiding(), "review-1/web", tt.done)
		if got.Summary() != "Release Recovered" || !strings.HasSuffix(got.Detail(), "Release review-1/web had been left by an interrupted run: "+tt.want) {
			t.Errorf("%+v: %q: %q; want it to end %q", tt.done, got.Summary(), got.Detail(), tt.want)
		}
	}
}

// A wait that ran out of time with objects blocked for a reason that might have cleared (a pod
// no node could take) names blocked_timeout, which would have failed it sooner; a wait that
// ran out with nothing blocked says to raise timeout.
func TestReleaseDiagnostics_timeoutNamesBlockedTimeoutWhenObjectsWereBlocked(t *testing.T) {
	unschedulable := readiness.Failure{Object: "Deployment.apps/web", Reason: "Unschedulable", Message: "pod web-1: 0/3 nodes are available"}
	for _, tt := range []struct {
		name          string
		timeout       *helmrelease.TimeoutError
		want, wantNot []string
	}{
		{"blocked", &helmrelease.TimeoutError{Timeout: 5 * time.Minute, Blocked: []readiness.Failure{unschedulable}},
			[]string{"Deployment.apps/web waited to the end for a reason that might have cleared by itself (Unschedulable)", "set blocked_timeout"},
			[]string{"raise timeout"}},
		{"two blocked", &helmrelease.TimeoutError{Timeout: 5 * time.Minute, Blocked: []readiness.Failure{unschedulable,
			{Object: "PersistentVolumeClaim/data", Reason: "ProvisioningFailed"}, {Object: "Deployment.apps/api", Reason: "Unschedulable"}}},
			[]string{"3 objects waited to the end for a reason that might have cleared by itself (Unschedulable, ProvisioningFailed)", "set blocked_timeout"},
			nil},
		{"nothing blocked", &helmrelease.TimeoutError{Timeout: 5 * time.Minute}, []string{"raise timeout"}, []string{"blocked_timeout"}},
	} {
		err := &helmrelease.OperationError{Operation: "upgrade", Err: tt.timeout}
		first, _, _ := strings.Cut(applyDiagnostic(diagnosticsHiding(), "review-1/web", false, err).Detail(), "\n\n")
		for _, want := range tt.want {
			if !strings.Contains(first, want) {
				t.Errorf("%s: the diagnostic's sentences are %q; want %q", tt.name, first, want)
			}
		}
		for _, not := range tt.wantNot {
			if strings.Contains(first, not) {
				t.Errorf("%s: the diagnostic's sentences are %q; want no %q", tt.name, first, not)
			}
		}
	}
}

// Helm's refusal to overwrite an object without the release's ownership metadata names
// take_ownership, the way out.
func TestReleaseDiagnostics_ownershipConflictNamesTakeOwnership(t *testing.T) {
	err := &helmrelease.OperationError{Operation: "install", Err: &helmrelease.OwnershipError{Err: errors.New(`ConfigMap "web" exists and cannot be imported into the current release`)}}
	detail := applyDiagnostic(diagnosticsHiding(), "review-1/web", true, err).Detail()
	if first, _, _ := strings.Cut(detail, "\n\n"); !strings.Contains(first, "Set take_ownership = true") {
		t.Errorf("the diagnostic does not name take_ownership: %s", detail)
	}
}

// An object the apply would create that exists without the release's ownership metadata is
// refused on take_ownership, naming the object, what owns it and the way out.
func TestReleaseDiagnostics_existingObjectNamesTakeOwnership(t *testing.T) {
	m := &releaseModel{Namespace: types.StringValue("review-1"), Name: types.StringValue("web")}
	for _, tt := range []struct {
		err     error
		summary string
		want    []string
	}{
		{&release.UnownedError{Object: "ConfigMap web"}, "Object Already Exists", []string{"ConfigMap web exists", "no Helm release owns it", "Set take_ownership = true"}},
		{&release.UnownedError{Object: "ConfigMap web", Annotated: true}, "Object Already Exists",
			[]string{"ConfigMap web exists", "annotations of release review-1/web", "without the label app.kubernetes.io/managed-by=Helm", "Set take_ownership = true"}},
		{&release.UnownedError{Object: "CustomResourceDefinition gadgets.example.test", LeftBy: helmrelease.Owner{Namespace: "review-0", Name: "operator"}}, "Object Already Exists",
			[]string{"CustomResourceDefinition gadgets.example.test exists", "Helm release review-0/operator, which no longer exists", "helm.sh/resource-policy: keep", "Set take_ownership = true"}},
		{&release.OwnedError{Object: "ConfigMap web", Owner: helmrelease.Owner{Namespace: "review-1", Name: "other"}}, "Object Belongs to Another Release",
			[]string{"ConfigMap web exists", "belongs to Helm release review-1/other", "uninstall release review-1/other"}},
	} {
		d := planRefusedDiagnostic(m, tt.err)
		withPath, ok := d.(diag.DiagnosticWithPath)
		if !ok || !withPath.Path().Equal(path.Root("take_ownership")) || d.Summary() != tt.summary {
			t.Errorf("%v: the diagnostic %q, want %q on take_ownership", tt.err, d.Summary(), tt.summary)
		}
		for _, want := range tt.want {
			if !strings.Contains(d.Detail(), want) {
				t.Errorf("%v: %s: %q does not say %q", tt.err, d.Summary(), d.Detail(), want)
			}
		}
	}
}

// A refusal of an object's nulls is told apart: an unchanged object's gets its own error, which
// never offers force_replace; a changed object refused for an immutable field warns that its
// nulls may be the cause, with or without force_replace; an object without nulls says nothing
// of them.
func TestReleaseDiagnostics_dryRunRefusalOfNulls(t *testing.T) {
	immutable := &kube.RefusedError{Class: refusal.Immutable, Reason: "Invalid", Message: `PersistentVolumeClaim "data" is invalid: spec: Forbidden: spec is immutable after creation`,
		Causes: []kube.Cause{{Field: "spec", Immutable: true}}}
	claim := release.DryRunOutcome{Key: "PersistentVolumeClaim/data", Source: "app/templates/pvc.yaml", Nulls: []string{".spec.storageClassName"}}
	claim.Err = immutable
	unchanged := claim
	unchanged.Unchanged = true
	plain := claim
	plain.Nulls = nil
	byWebhook := unchanged
	byWebhook.Err = &kube.RefusedError{Class: refusal.Webhook, Reason: "Forbidden", Webhook: "claims.policy.example.com",
		Message: `admission webhook "claims.policy.example.com" denied the request: claims need a label`}
	byQuota := unchanged
	byQuota.Err = &kube.RefusedError{Class: refusal.Quota, Reason: "Forbidden",
		Message: `persistentvolumeclaims "data" is forbidden: exceeded quota: storage, requested: requests.storage=10Gi, used: requests.storage=0, limited: requests.storage=5Gi`}
	byPolicy := unchanged
	byPolicy.Err = &kube.RefusedError{Class: refusal.Policy, Reason: "Invalid", Policy: "claims-sized",
		Message: `persistentvolumeclaims "data" is forbidden: ValidatingAdmissionPolicy 'claims-sized' with binding 'claims-sized' denied request: claims stay small`}
	for _, tt := range []struct {
		desc      string
		force     bool
		outcome   release.DryRunOutcome
		summary   string
		want, not []string
	}{
		{"unchanged", false, unchanged, "Null Field Refused by the API Server", []string{"does not change", "null at .spec.storageClassName", "patches"}, []string{"set force_replace = true"}},
		{"unchanged, force_replace", true, unchanged, "Null Field Refused by the API Server", []string{"null at .spec.storageClassName"}, []string{"With force_replace, the apply deletes"}},
		{"changed", false, claim, "Immutable Field Changed", []string{"force_replace", "holds null at .spec.storageClassName", "rather than replacing the object"}, nil},
		{"changed, force_replace", true, claim, "Object Will Be Replaced", []string{"holds null at .spec.storageClassName"}, nil},
		{"changed, no null", false, plain, "Immutable Field Changed", []string{"force_replace"}, []string{"null"}},
		{"unchanged, refused by a webhook", false, byWebhook, "Object Refused by an Admission Webhook", []string{"claims.policy.example.com", "claims need a label"}, []string{"null"}},
		{"unchanged, refused by a quota", false, byQuota, "Object Refused by the API Server", []string{"a ResourceQuota of the namespace", "requests.storage=5Gi"}, []string{"null"}},
		{"unchanged, refused by an admission policy", false, byPolicy, "Object Refused by the API Server", []string{"the ValidatingAdmissionPolicy \"claims-sized\"", "claims stay small"}, []string{"null"}},
	} {
		m := &releaseModel{Namespace: types.StringValue("review-1"), Name: types.StringValue("app"), ForceReplace: types.BoolValue(tt.force)}
		var diags diag.Diagnostics
		if reason := addDryRunDiagnostic(m, tt.outcome, release.PodSecurityLevels{}, &diags); reason != "" || len(diags) != 1 {
			t.Fatalf("%s: %d diagnostics, not checked %q", tt.desc, len(diags), reason)
		}
		if diags[0].Summary() != tt.summary {
			t.Errorf("%s: %q, want %q", tt.desc, diags[0].Summary(), tt.summary)
		}
		for _, want := range tt.want {
			if !strings.Contains(diags[0].Detail(), want) {
				t.Errorf("%s: the detail does not say %q:\n%s", tt.desc, want, diags[0].Detail())
			}
		}
		for _, not := range tt.not {
			if strings.Contains(diags[0].Detail(), not) {
				t.Errorf("%s: the detail says %q:\n%s", tt.desc, not, diags[0].Detail())
			}
		}
	}

	// An unchanged object the API server accepts says nothing, whatever it warns about: a Pod
	// Security level raised since it was applied is not this plan's change.
	accepted := release.DryRunOutcome{Key: "Deployment.apps/app", Unchanged: true, Nulls: []string{".spec.template.spec.containers[0].resources"}}
	accepted.Result = &kube.DryRunResult{Warnings: []string{`would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false`}}
	m := &releaseModel{Namespace: types.StringValue("review-1"), Name: types.StringValue("app")}
	var diags diag.Diagnostics
	if reason := addDryRunDiagnostic(m, accepted, release.PodSecurityLevels{Enforce: "restricted"}, &diags); reason != "" || len(diags) != 0 {
		t.Errorf("an accepted unchanged object: %v, not checked %q; want nothing", diags, reason)
	}
	changed := accepted
	changed.Unchanged = false
	if addDryRunDiagnostic(m, changed, release.PodSecurityLevels{Enforce: "restricted"}, &diags); len(diags) != 1 || diags[0].Summary() != "Pods Refused by Pod Security" {
		t.Errorf("the same object changed: %v, want the Pod Security error", diags)
	}

	// The environment's plan replaces the namespace's "restricted" with "privileged": the
	// warning about the level replaced is not this plan's, a warning about another level (the
	// namespace's warn label) still shows.
	diags = nil
	changed.Result = &kube.DryRunResult{Warnings: []string{
		`would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false`,
		`would violate PodSecurity "baseline:latest": privileged`,
	}}
	addDryRunDiagnostic(m, changed, release.PodSecurityLevels{Enforce: "privileged", Replaced: "restricted", Planned: true}, &diags)
	if len(diags) != 1 || diags[0].Summary() != "API Server Warnings" || strings.Contains(diags[0].Detail(), "restricted") || !strings.Contains(diags[0].Detail(), `"baseline:latest"`) {
		t.Errorf("under a level the environment's plan replaces: %v, want the warning about the other level alone", diags)
	}
}

// A release whose namespace is being deleted is planned without a dry run of its namespaced
// objects, and the plan says so once, naming the namespace; a namespace not created yet is no
// news to anyone and says nothing.
func TestReleaseDiagnostics_namespaceBeingDeletedWarns(t *testing.T) {
	m := &releaseModel{Namespace: types.StringValue("review-1"), Name: types.StringValue("app")}
	var diags diag.Diagnostics
	addDryRunDiagnostics(context.Background(), m, &release.DryRunChecked{NamespaceTerminating: true}, "", &diags)
	if len(diags) != 1 || diags[0].Severity() != diag.SeverityWarning || diags[0].Summary() != "Namespace Being Deleted" {
		t.Fatalf("diagnostics %v, want one warning Namespace Being Deleted", diags)
	}
	for _, want := range []string{"review-1/app", "namespace review-1 is being deleted", "were not dry-run", "only at the apply"} {
		if !strings.Contains(diags[0].Detail(), want) {
			t.Errorf("the detail does not say %q:\n%s", want, diags[0].Detail())
		}
	}
	diags = nil
	addDryRunDiagnostics(context.Background(), m, &release.DryRunChecked{NamespaceMissing: true}, "", &diags)
	if len(diags) != 0 {
		t.Errorf("a namespace not created yet: %v, want nothing", diags)
	}
}

// Pods a level the environment's plan sets would refuse are reported once per object: from the
// plan's own evaluation, or from the dry run's warning when the namespace's warn label already
// names that level. A hook's pods refused by the namespace's own level say so, with the version
// the namespace pins.
func TestReleaseDiagnostics_podsRefusedByAPlannedLevel(t *testing.T) {
	warned := release.DryRunOutcome{Key: "Deployment.apps/app", Source: "app/templates/deployment.yaml"}
	warned.Result = &kube.DryRunResult{Warnings: []string{`would violate PodSecurity "restricted:latest": runAsNonRoot != true (pod or container "app" must set securityContext.runAsNonRoot=true)`}}
	quiet := release.DryRunOutcome{Key: "StatefulSet.apps/db", Source: "app/templates/db.yaml"}
	quiet.Result = &kube.DryRunResult{}
	checked := &release.DryRunChecked{
		PodSecurityLevels: release.PodSecurityLevels{Enforce: "restricted", Replaced: "baseline", Planned: true},
		Outcomes:          []release.DryRunOutcome{warned, quiet},
		PodSecurity: []release.PodSecurityRefusal{
			{Key: warned.Key, Source: warned.Source, Level: "restricted", Version: "latest", Planned: true, Forbidden: `runAsNonRoot != true (pod or container "app" must set securityContext.runAsNonRoot=true)`},
			{Key: quiet.Key, Source: quiet.Source, Level: "restricted", Version: "latest", Planned: true, Forbidden: `seccompProfile (pod or container "db" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`},
			{Key: "Job.batch/migrate", Source: "app/templates/migrate.yaml", Level: "baseline", Version: "v1.30", Forbidden: `host namespaces (hostNetwork=true)`},
		},
	}
	m := &releaseModel{Namespace: types.StringValue("review-1"), Name: types.StringValue("app")}
	var diags diag.Diagnostics
	addDryRunDiagnostics(context.Background(), m, checked, "", &diags)
	if len(diags) != 3 {
		t.Fatalf("%d diagnostics, want one for each object:\n%v", len(diags), diags)
	}
	for i, want := range []string{
		`the plan of its environment sets namespace review-1 to enforce the "restricted" Pod Security level, and the pods of Deployment.apps/app (from app/templates/deployment.yaml)`,
		`the plan of its environment sets namespace review-1 to enforce the "restricted" Pod Security level, and the pods of StatefulSet.apps/db (from app/templates/db.yaml)`,
		`namespace review-1 enforces the "baseline" Pod Security level, and the pods of Job.batch/migrate (from app/templates/migrate.yaml)`,
	} {
		if diags[i].Summary() != "Pods Refused by Pod Security" || !strings.Contains(diags[i].Detail(), want) {
			t.Errorf("diagnostic %d: %q\n%s\nwant it to say %q", i, diags[i].Summary(), diags[i].Detail(), want)
		}
	}
	if !strings.Contains(diags[1].Detail(), `give the environment's label pod-security.kubernetes.io/enforce a level that admits them`) ||
		!strings.Contains(diags[1].Detail(), `would violate PodSecurity "restricted:latest": seccompProfile`) {
		t.Errorf("the planned level's refusal does not say what to do and what the level forbids:\n%s", diags[1].Detail())
	}
	if strings.Contains(diags[2].Detail(), "environment's label") || !strings.Contains(diags[2].Detail(), `would violate PodSecurity "baseline:v1.30": host namespaces`) {
		t.Errorf("the namespace's own level's refusal offers the environment's label, or does not name the version:\n%s", diags[2].Detail())
	}

	// A plan that pins another policy version of the namespace's level: the dry run's warning
	// about that level is about the version the apply replaces, and the plan's own evaluation at
	// the pinned version is the one reported.
	checked.PodSecurityLevels = release.PodSecurityLevels{Enforce: "restricted", Replaced: "restricted", Version: "v1.30", Planned: true}
	checked.PodSecurity = []release.PodSecurityRefusal{{Key: warned.Key, Source: warned.Source, Level: "restricted", Version: "v1.30", Planned: true,
		Forbidden: `runAsNonRoot != true (pod or container "app" must set securityContext.runAsNonRoot=true)`}}
	diags = nil
	addDryRunDiagnostics(context.Background(), m, checked, "", &diags)
	if len(diags) != 1 || !strings.Contains(diags[0].Detail(), `would violate PodSecurity "restricted:v1.30": runAsNonRoot`) ||
		!strings.Contains(diags[0].Detail(), `to enforce the "restricted" Pod Security level at policy version v1.30 (pod-security.kubernetes.io/enforce-version)`) {
		t.Errorf("a pinned version's refusal: %v, want the plan's evaluation at v1.30 alone", diags)
	}
}
