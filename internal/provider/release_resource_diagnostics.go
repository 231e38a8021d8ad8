package provider

import (
	"errors"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chart"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/drift"
)

// The release's diagnostics. Wording shared with the environment lives in diagnostics.go.

// ignoreRuleDiagnostic points an invalid ignore_differences rule (at rule) at the attribute
// and list element it concerns.
func ignoreRuleDiagnostic(rule path.Path, err error) diag.Diagnostic {
	at := rule
	var ruleErr *drift.RuleError
	if errors.As(err, &ruleErr) && ruleErr.Field != "" {
		at = rule.AtName(ruleErr.Field).AtListIndex(ruleErr.Index)
	}
	return diag.NewAttributeErrorDiagnostic(at, "Invalid Ignore Differences Rule",
		at.String()+" cannot be used: "+errorText(err)+". Fix the rule, or remove it.")
}

// errorText is err's message, or that of the error it wraps for a *drift.RuleError, whose
// attribute the diagnostic's path already names.
func errorText(err error) string {
	var ruleErr *drift.RuleError
	if errors.As(err, &ruleErr) {
		return ruleErr.Err.Error()
	}
	return err.Error()
}

// valuesErrorPath points a chart.MergeValues error at the attribute, and the document or key,
// it names.
func valuesErrorPath(err error) path.Path {
	var values *chart.ValuesError
	if !errors.As(err, &values) {
		return path.Root("values")
	}
	if values.Attribute == "values" {
		return path.Root("values").AtListIndex(values.Index)
	}
	return path.Root(values.Attribute).AtMapKey(values.Key)
}
