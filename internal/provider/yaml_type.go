package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/attr/xattr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// yamlType is a string holding a YAML document. Two values that mean the same (key order,
// indentation, quoting and comments aside) are semantically equal, so the provider never
// reports a reformatted document as drift, and invalid YAML is refused at validation with its
// line.
type yamlType struct {
	basetypes.StringType
}

var (
	_ basetypes.StringTypable                    = yamlType{}
	_ basetypes.StringValuableWithSemanticEquals = yamlValue{}
	_ xattr.ValidateableAttribute                = yamlValue{}
)

func (t yamlType) Equal(o attr.Type) bool {
	_, ok := o.(yamlType)
	return ok
}

func (t yamlType) String() string { return "yamlType" }

func (t yamlType) ValueFromString(_ context.Context, in basetypes.StringValue) (basetypes.StringValuable, diag.Diagnostics) {
	return yamlValue{StringValue: in}, nil
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
	return yamlValue{StringValue: s}, nil
}

func (t yamlType) ValueType(context.Context) attr.Value { return yamlValue{} }

// yamlValue is a value of yamlType.
type yamlValue struct {
	basetypes.StringValue
}

func (v yamlValue) Type(context.Context) attr.Type { return yamlType{} }

func (v yamlValue) Equal(o attr.Value) bool {
	other, ok := o.(yamlValue)
	return ok && v.StringValue.Equal(other.StringValue)
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
// validate list elements of a custom type on its own.
type yamlListValidator struct{}

var _ validator.List = yamlListValidator{}

func (yamlListValidator) Description(context.Context) string {
	return "every element is valid YAML"
}

func (v yamlListValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (yamlListValidator) ValidateList(ctx context.Context, req validator.ListRequest, resp *validator.ListResponse) {
	for i, e := range req.ConfigValue.Elements() {
		if doc, ok := e.(yamlValue); ok {
			r := &xattr.ValidateAttributeResponse{}
			doc.ValidateAttribute(ctx, xattr.ValidateAttributeRequest{Path: req.Path.AtListIndex(i)}, r)
			resp.Diagnostics.Append(r.Diagnostics...)
		}
	}
}
