package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr/xattr"
	"github.com/hashicorp/terraform-plugin-framework/path"
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
