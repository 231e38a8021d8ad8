package manifest

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestRender_sameDataSameText(t *testing.T) {
	tests := []struct {
		desc string
		obj  Object
		want string
	}{
		{"sorted keys", Object{"b": "2", "a": "1", "c": map[string]any{"z": true, "y": false}}, "a: \"1\"\nb: \"2\"\nc:\n  \"y\": false\n  z: true\n"},
		{"int64 and float64 and json.Number agree", Object{"a": int64(3), "b": float64(3), "c": json.Number("3"), "d": 3}, "a: 3\nb: 3\nc: 3\nd: 3\n"},
		{"big integers keep their digits", Object{"big": json.Number("9007199254740993")}, "big: 9007199254740993\n"},
		{"yaml 1.1 booleans stay strings", Object{"a": "yes", "b": "on", "c": "N"}, "a: \"yes\"\nb: \"on\"\nc: \"N\"\n"},
		{"numbers in strings stay strings", Object{"a": "0777", "b": "1e3", "c": "1:20"}, "a: \"0777\"\nb: \"1e3\"\nc: \"1:20\"\n"},
		{"multi-line strings are literal blocks", Object{"a": "x\ny\n"}, "a: |\n  x\n  y\n"},
		{"lists at their key's indentation", Object{"a": []any{map[string]any{"b": "c", "d": []any{"e"}}}}, "a:\n- b: c\n  d:\n  - e\n"},
		{"typed maps and slices", Object{"a": map[string]string{"b": "c"}, "d": []string{"e"}}, "a:\n  b: c\nd:\n- e\n"},
		{"long lines are not wrapped", Object{"a": strings.Repeat("word ", 40)}, "a: '" + strings.Repeat("word ", 40) + "'\n"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			got, err := Render(tt.obj)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Render gave\n%s\nwant\n%s", got, tt.want)
			}
			if again, _ := Render(tt.obj); again != got {
				t.Errorf("Render is not deterministic:\n%s\nthen\n%s", got, again)
			}
		})
	}
}

func TestRender_readsBackTheSame(t *testing.T) {
	for _, obj := range loadFixture(t) {
		text, err := Render(obj)
		if err != nil {
			t.Fatal(err)
		}
		parsed, err := SplitDocuments(text)
		if err != nil {
			t.Fatalf("rendered YAML does not parse: %v\n%s", err, text)
		}
		if again, _ := Render(parsed[0]); again != text {
			t.Errorf("render, parse, render changed the text:\n%s\nthen\n%s", text, again)
		}
	}
}

func TestRender_unsupportedValuesAreErrors(t *testing.T) {
	if _, err := Render(Object{"f": func() {}}); err == nil || !strings.HasPrefix(err.Error(), "render yaml: ") {
		t.Errorf("Render(func) error = %v, want a render yaml error", err)
	}
}

func TestCanonicalYAML_formDoesNotMatter(t *testing.T) {
	tests := []struct {
		desc, in, want string
	}{
		{"empty", "", ""},
		{"comment only", "# nothing\n", ""},
		{"null", "null\n", ""},
		{"flow style and order", "{b: [1, 2], a: x}", "a: x\nb:\n- 1\n- 2\n"},
		{"quoting", "a: 'x'\nb: \"y\"\n", "a: x\nb: \"y\"\n"},
		{"multi-document", "a: 1\n---\n---\nb: 2\n", "a: 1\n---\nb: 2\n"},
		{"scalar document", "hello", "hello\n"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			got, err := CanonicalYAML(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("CanonicalYAML(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestYAMLEqual_semanticComparison(t *testing.T) {
	tests := []struct {
		desc    string
		a, b    string
		want    bool
		wantErr string
	}{
		{"key order", "a: 1\nb: 2\n", "b: 2\na: 1\n", true, ""},
		{"whitespace and comments", "a:   1 # one\n\n", "a: 1", true, ""},
		{"flow and block", "list: [x, y]", "list:\n  - x\n  - y\n", true, ""},
		{"empty and null", "", "null", true, ""},
		{"different value", "a: 1", "a: 2", false, ""},
		{"number and string", "a: 1", "a: \"1\"", false, ""},
		{"empty and empty map", "", "{}", false, ""},
		{"list order matters", "[x, y]", "[y, x]", false, ""},
		{"invalid first", "a: [", "a: 1", false, "first yaml: "},
		{"invalid second", "a: 1", "a: [", false, "second yaml: "},
		{"invalid even if identical", "a: [", "a: [", false, "first yaml: "},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			got, err := YAMLEqual(tt.a, tt.b)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("YAMLEqual error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("YAMLEqual(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
		})
	}
}
