package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/attr/xattr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func TestYAMLValue_semanticEquality(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want bool
	}{
		{name: "key order and indentation", a: "image:\n  tag: '1.2'\n  repository: web\n", b: "image: {repository: web, tag: \"1.2\"}", want: true},
		{name: "comments", a: "# the tag\nreplicas: 2\n", b: "replicas: 2", want: true},
		{name: "changed value", a: "replicas: 2", b: "replicas: 3", want: false},
		{name: "string and number differ", a: "tag: '1.2'", b: "tag: 1.2", want: false},
		{name: "invalid yaml is never equal", a: "a: [", b: "a: [", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, diags := newYAMLValue(tt.a).StringSemanticEquals(context.Background(), newYAMLValue(tt.b))
			if diags.HasError() {
				t.Fatalf("diagnostics: %v", diags)
			}
			if got != tt.want {
				t.Errorf("StringSemanticEquals(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
		})
	}
}

func TestYAMLValue_validationNamesTheLine(t *testing.T) {
	resp := &xattr.ValidateAttributeResponse{}
	newYAMLValue("replicas: 1\nimage:\n  tag: [1.2\n").ValidateAttribute(context.Background(),
		xattr.ValidateAttributeRequest{Path: path.Root("values").AtListIndex(0)}, resp)
	if !resp.Diagnostics.HasError() {
		t.Fatal("invalid YAML passed validation")
	}
	detail := resp.Diagnostics[0].Detail()
	if resp.Diagnostics[0].Summary() != "Invalid YAML" || !strings.Contains(detail, "values[0]") || !strings.Contains(detail, "line 3") {
		t.Errorf("diagnostic %q: %q does not name the document and the line", resp.Diagnostics[0].Summary(), detail)
	}

	resp = &xattr.ValidateAttributeResponse{}
	newYAMLValue("replicas: 1\n").ValidateAttribute(context.Background(), xattr.ValidateAttributeRequest{Path: path.Root("values")}, resp)
	if resp.Diagnostics.HasError() {
		t.Errorf("valid YAML refused: %v", resp.Diagnostics)
	}
}

func TestYAMLListValidator_sensitiveDocumentsAreNotQuoted(t *testing.T) {
	const secret = "s3cret-Unclosed-4711"
	tests := []struct {
		name, doc, want string
	}{
		{"invalid YAML", "db:\n  password: [" + secret + "\n", "at line 2"},
		{"not a mapping", secret + "\n", "not a YAML mapping"},
		{"a list", "- " + secret + "\n", "not a YAML mapping"},
		{"a wrong type in a mapping", "db: !!int " + secret + "\n", "not a YAML mapping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list, diags := types.ListValue(yamlType{}, []attr.Value{newYAMLValue("ok: true\n"), newYAMLValue(tt.doc)})
			if diags.HasError() {
				t.Fatal(diags)
			}
			resp := &validator.ListResponse{}
			yamlListValidator{sensitive: true}.ValidateList(context.Background(), validator.ListRequest{Path: path.Root("values_sensitive"), ConfigValue: list}, resp)
			if len(resp.Diagnostics) != 1 {
				t.Fatalf("diagnostics = %v, want one error", resp.Diagnostics)
			}
			d := resp.Diagnostics[0]
			if d.Summary() != "Invalid YAML" || !strings.Contains(d.Detail(), "values_sensitive[1]") || !strings.Contains(d.Detail(), tt.want) {
				t.Errorf("diagnostic %q: %q does not name the document and %q", d.Summary(), d.Detail(), tt.want)
			}
			if strings.Contains(d.Detail(), secret) {
				t.Errorf("the diagnostic quotes the sensitive document: %q", d.Detail())
			}
			if first, _, _ := strings.Cut(d.Detail(), ";"); strings.Count(d.Detail(), "not a YAML mapping")+strings.Count(d.Detail(), "not valid YAML") != 1 || !strings.Contains(first, tt.want) {
				t.Errorf("the diagnostic does not say once, in its first sentence, what is wrong: %q", d.Detail())
			}
		})
	}
}

func TestYAMLValue_sensitiveDocumentsPrintNothing(t *testing.T) {
	doc := "password: s3cret-4711\n"
	v, _ := yamlType{sensitive: true}.ValueFromString(context.Background(), types.StringValue(doc))
	list, _ := types.ListValue(yamlType{sensitive: true}, []attr.Value{v.(attr.Value)})
	for _, s := range []string{v.(attr.Value).String(), list.String()} {
		if strings.Contains(s, "s3cret") {
			t.Errorf("a sensitive document prints as %q", s)
		}
	}
	if s := newYAMLValue(doc).String(); !strings.Contains(s, "s3cret") {
		t.Errorf("a values document prints as %q, want its text", s)
	}
}
