package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/attr/xattr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/chart"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// yamlType is a string holding a YAML document. Two values that mean the same (key order,
// indentation, quoting and comments aside) are semantically equal, so the provider never
// reports a reformatted document as drift, and invalid YAML is refused at validation with its
// line. A sensitive yamlType's values print as "(sensitive value)": the framework logs values'
// String() at trace level (semantic equality), and a sensitive document must not reach a log.
type yamlType struct {
	basetypes.StringType
	sensitive bool
}

var (
	_ basetypes.StringTypable                    = yamlType{}
	_ basetypes.StringValuableWithSemanticEquals = yamlValue{}
	_ xattr.ValidateableAttribute                = yamlValue{}
)

func (t yamlType) Equal(o attr.Type) bool {
	other, ok := o.(yamlType)
	return ok && other.sensitive == t.sensitive
}

func (t yamlType) String() string { return "yamlType" }

func (t yamlType) ValueFromString(_ context.Context, in basetypes.StringValue) (basetypes.StringValuable, diag.Diagnostics) {
	return yamlValue{StringValue: in, sensitive: t.sensitive}, nil
}

func (t yamlType) ValueFromTerraform(ctx context.Context, in tftypes.Value) (attr.Value, error) {
	v, err := t.StringType.ValueFromTerraform(ctx, in)
	if err != nil {
		return nil, err
	}
	s, ok := v.(basetypes.StringValue)
	if !ok {
		return nil, fmt.Errorf("unexpected value type %T", v)
	}
	return yamlValue{StringValue: s, sensitive: t.sensitive}, nil
}

func (t yamlType) ValueType(context.Context) attr.Value { return yamlValue{sensitive: t.sensitive} }

// yamlValue is a value of yamlType.
type yamlValue struct {
	basetypes.StringValue
	sensitive bool
}

func (v yamlValue) Type(context.Context) attr.Type { return yamlType{sensitive: v.sensitive} }

func (v yamlValue) Equal(o attr.Value) bool {
	other, ok := o.(yamlValue)
	return ok && other.sensitive == v.sensitive && v.StringValue.Equal(other.StringValue)
}

// String is the value as text for logs: "(sensitive value)" for a sensitive document.
func (v yamlValue) String() string {
	if v.sensitive && !v.IsNull() && !v.IsUnknown() {
		return "(sensitive value)"
	}
	return v.StringValue.String()
}

// StringSemanticEquals reports whether two documents hold the same data.
func (v yamlValue) StringSemanticEquals(_ context.Context, newValuable basetypes.StringValuable) (bool, diag.Diagnostics) {
	var diags diag.Diagnostics
	newValue, ok := newValuable.(yamlValue)
	if !ok {
		diags.AddError("Semantic Equality Check Error",
			fmt.Sprintf("Expected a YAML value, got %T. This is a bug in the provider; please report it.", newValuable))
		return false, diags
	}
	equal, err := manifest.YAMLEqual(v.ValueString(), newValue.ValueString())
	// Invalid YAML is reported by validation; here it is simply not equal.
	return err == nil && equal, diags
}

// ValidateAttribute refuses a document that is not valid YAML, naming the line.
func (v yamlValue) ValidateAttribute(_ context.Context, req xattr.ValidateAttributeRequest, resp *xattr.ValidateAttributeResponse) {
	if v.IsNull() || v.IsUnknown() {
		return
	}
	if _, err := manifest.CanonicalYAML(v.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid YAML",
			fmt.Sprintf("The value at %s is not valid YAML. Fix the document; positions count from its first line.\n\n%v", req.Path, err))
	}
}

func newYAMLValue(s string) yamlValue { return yamlValue{StringValue: basetypes.NewStringValue(s)} }

// yamlListValidator validates each document of a list of yamlType: the framework does not
// validate list elements of a custom type on its own. With sensitive, a document must be a
// mapping of values and the diagnostic names its line only: the YAML parser's message may
// quote the document.
type yamlListValidator struct {
	sensitive bool
}

var _ validator.List = yamlListValidator{}

func (yamlListValidator) Description(context.Context) string {
	return "every element is valid YAML"
}

func (v yamlListValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v yamlListValidator) ValidateList(ctx context.Context, req validator.ListRequest, resp *validator.ListResponse) {
	for i, e := range req.ConfigValue.Elements() {
		doc, ok := e.(yamlValue)
		if !ok {
			continue
		}
		if v.sensitive {
			validateSensitiveDocument(doc, req.Path.AtListIndex(i), &resp.Diagnostics)
			continue
		}
		r := &xattr.ValidateAttributeResponse{}
		doc.ValidateAttribute(ctx, xattr.ValidateAttributeRequest{Path: req.Path.AtListIndex(i)}, r)
		resp.Diagnostics.Append(r.Diagnostics...)
	}
}

// validateSensitiveDocument refuses a sensitive document that is not a YAML mapping of values,
// naming its line but nothing of its text.
func validateSensitiveDocument(doc yamlValue, at path.Path, diags *diag.Diagnostics) {
	if doc.IsNull() || doc.IsUnknown() {
		return
	}
	_, err := chart.MergeValues(chart.Values{SensitiveDocuments: []string{doc.ValueString()}})
	if err == nil {
		return
	}
	what := "is not a YAML mapping of values (a document must map keys to values)"
	var values *chart.ValuesError
	if errors.As(err, &values) && values.Line > 0 {
		what = fmt.Sprintf("is not valid YAML at line %d (positions count from the document's first line)", values.Line)
	}
	diags.AddAttributeError(at, "Invalid YAML", fmt.Sprintf("The value at %s %s; the parser's message is not shown, as it may quote "+
		"the sensitive document. Check the document, for instance with yamlencode of a map.", at, what))
}
