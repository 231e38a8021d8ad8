package chart

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestMergeValues(t *testing.T) {
	tests := []struct {
		name   string
		values Values
		want   map[string]any
	}{
		{
			name:   "nothing",
			values: Values{},
			want:   map[string]any{},
		},
		{
			name: "later documents win, maps merge key by key",
			values: Values{Documents: []string{
				"image:\n  repository: a\n  tag: \"1\"\nreplicaCount: 1\nlist: [1, 2]\n",
				"image:\n  tag: \"2\"\nlist: [3]\n",
				"",
			}},
			want: map[string]any{
				"image":        map[string]any{"repository": "a", "tag": "2"},
				"replicaCount": float64(1),
				"list":         []any{float64(3)},
			},
		},
		{
			name: "set is typed like helm --set and applied after documents",
			values: Values{
				Documents: []string{"replicaCount: 1\nimage:\n  tag: old\n"},
				Set: map[string]string{
					"replicaCount": "3",
					"image.tag":    "007",
					"enabled":      "true",
					"nothing":      "null",
					"env[0].name":  "A",
				},
			},
			want: map[string]any{
				"replicaCount": int64(3),
				"image":        map[string]any{"tag": "007"},
				"enabled":      true,
				"nothing":      nil,
				"env":          []any{map[string]any{"name": "A"}},
			},
		},
		{
			name: "set values are literal: commas, braces, backslashes, equals",
			values: Values{Set: map[string]string{
				"a": "x,y=z",
				"b": "{1,2}",
				"c": `C:\path\`,
			}},
			want: map[string]any{"a": "x,y=z", "b": "{1,2}", "c": `C:\path\`},
		},
		{
			name:   "escaped dots in a path are part of the key",
			values: Values{Set: map[string]string{`podAnnotations.example\.com/team`: "web"}},
			want:   map[string]any{"podAnnotations": map[string]any{"example.com/team": "web"}},
		},
		{
			name: "set_sensitive values are strings and win over set",
			values: Values{
				Set:          map[string]string{"password": "plain"},
				SetSensitive: map[string]string{"password": "12345", "token": "true"},
			},
			want: map[string]any{"password": "12345", "token": "true"},
		},
		{
			name: "sensitive documents merge after documents and before set and set_sensitive",
			values: Values{
				Documents:          []string{"db:\n  user: app\n  password: from-values\n  host: a\n  port: 1\n"},
				SensitiveDocuments: []string{"db:\n  password: from-sensitive\n  host: b\n  port: 2\n", "db:\n  port: 3\n"},
				Set:                map[string]string{"db.host": "c"},
				SetSensitive:       map[string]string{"db.port": "4"},
			},
			want: map[string]any{"db": map[string]any{"user": "app", "password": "from-sensitive", "host": "c", "port": "4"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MergeValues(tt.values)
			if err != nil {
				t.Fatalf("MergeValues: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("MergeValues =\n%#v\nwant\n%#v", got, tt.want)
			}
		})
	}
}

func TestMergeValues_errors(t *testing.T) {
	const canary = "canary-5ecr3t-value"
	tests := []struct {
		name    string
		values  Values
		want    []string
		wantErr ValuesError
	}{
		{
			name:    "invalid YAML names the document and line",
			values:  Values{Documents: []string{"a: 1\n", "a: 1\nb: 2\nc: d: e\n"}},
			want:    []string{"Documents[1]", "line 3"},
			wantErr: ValuesError{Input: InDocuments, Index: 1, Line: 3},
		},
		{
			name:    "tab indentation",
			values:  Values{Documents: []string{"a:\n\tb: 1\n"}},
			want:    []string{"Documents[0]", "line 2"},
			wantErr: ValuesError{Input: InDocuments, Index: 0, Line: 2},
		},
		{
			name:    "a document that is not a mapping",
			values:  Values{Documents: []string{"- a\n- b\n"}},
			want:    []string{"Documents[0]", "not a YAML mapping"},
			wantErr: ValuesError{Input: InDocuments, Index: 0},
		},
		{
			name:    "a sensitive document names its own list",
			values:  Values{Documents: []string{"a: 1\n"}, SensitiveDocuments: []string{"b: 2\n", "c:\n  d: [" + canary + "\n"}},
			want:    []string{"SensitiveDocuments[1]", "line 2"},
			wantErr: ValuesError{Input: InSensitiveDocuments, Index: 1, Line: 2},
		},
		{
			name:    "unescaped equals in a set path",
			values:  Values{Set: map[string]string{"a=b": "1"}},
			want:    []string{`Set["a=b"]`, "unescaped '='"},
			wantErr: ValuesError{Input: InSet, Key: "a=b"},
		},
		{
			name:    "unescaped comma in a set path",
			values:  Values{Set: map[string]string{"a,b": "1"}},
			want:    []string{`Set["a,b"]`, "unescaped ','"},
			wantErr: ValuesError{Input: InSet, Key: "a,b"},
		},
		{
			name:    "unterminated index",
			values:  Values{Set: map[string]string{"list[0": "1"}},
			want:    []string{`Set["list[0"]`, "does not parse"},
			wantErr: ValuesError{Input: InSet, Key: "list[0"},
		},
		{
			name:    "bad index never quotes a sensitive value",
			values:  Values{SetSensitive: map[string]string{"list[x": canary}},
			want:    []string{`SetSensitive["list[x"]`, "does not parse"},
			wantErr: ValuesError{Input: InSetSensitive, Key: "list[x"},
		},
		{
			name:    "empty path",
			values:  Values{Set: map[string]string{"": "1"}},
			want:    []string{"path is empty"},
			wantErr: ValuesError{Input: InSet, Key: ""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := MergeValues(tt.values)
			if err == nil {
				t.Fatal("MergeValues succeeded, want an error")
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
			if strings.Contains(err.Error(), canary) {
				t.Errorf("error %q contains the sensitive value", err)
			}
			var got *ValuesError
			if !errors.As(err, &got) {
				t.Fatalf("error %q is not a *ValuesError", err)
			}
			if got.Input != tt.wantErr.Input || got.Index != tt.wantErr.Index || got.Line != tt.wantErr.Line || got.Key != tt.wantErr.Key {
				t.Errorf("error = %+v, want input %s, index %d, line %d, key %q", got, tt.wantErr.Input, tt.wantErr.Index, tt.wantErr.Line, tt.wantErr.Key)
			}
		})
	}
}
