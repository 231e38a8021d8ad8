package provider

import (
	"maps"
	"testing"
)

func TestSilenceUnaskedLogs(t *testing.T) {
	off := map[string]string{
		"TF_LOG_SDK":                "OFF",
		"TF_LOG_SDK_PROTO":          "OFF",
		"TF_LOG_SDK_FRAMEWORK":      "OFF",
		"TF_LOG_PROVIDER_GITLABK8S": "OFF",
	}
	tests := []struct {
		name string
		env  map[string]string
		want map[string]string
	}{
		{"no log asked: every logger off", map[string]string{}, off},
		{"an empty TF_LOG asks for none", map[string]string{"TF_LOG": ""}, merged(off, map[string]string{"TF_LOG": ""})},
		{"TF_LOG asks for logs", map[string]string{"TF_LOG": "DEBUG"}, map[string]string{"TF_LOG": "DEBUG"}},
		{"TF_LOG_PROVIDER asks for the provider's", map[string]string{"TF_LOG_PROVIDER": "TRACE"}, map[string]string{"TF_LOG_PROVIDER": "TRACE"}},
		{
			"a level the user set stays",
			map[string]string{"TF_LOG_SDK_PROTO": "TRACE"},
			merged(off, map[string]string{"TF_LOG_SDK_PROTO": "TRACE"}),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := maps.Clone(tt.env)
			lookup := func(name string) (string, bool) { v, ok := env[name]; return v, ok }
			set := func(name, value string) error { env[name] = value; return nil }
			if err := SilenceUnaskedLogs(lookup, set); err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(env, tt.want) {
				t.Errorf("environment %v, want %v", env, tt.want)
			}
		})
	}
}

func merged(a, b map[string]string) map[string]string {
	out := maps.Clone(a)
	maps.Copy(out, b)
	return out
}
