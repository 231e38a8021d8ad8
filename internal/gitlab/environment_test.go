package gitlab

import (
	"strings"
	"testing"
)

func TestValidateEnvironmentName_saysWhatIsWrongAndWhatIsAllowed(t *testing.T) {
	tests := []struct {
		name    string
		wantErr string
	}{
		{"production", ""},
		{"review/feature-1", ""},
		{"Review App ${CI_COMMIT_REF_SLUG}.v2_x", ""},
		{strings.Repeat("a", 255), ""},
		{"", "must not be empty"},
		{strings.Repeat("a", 256), "256 characters long; it can be at most 255"},
		{"review@x", `contains '@' at position 7; it can contain only letters, digits, spaces`},
		{"prod:eu", `contains ':' at position 5`},
		{"tést", `contains 'é' at position 2`},
		{"/review", "starts with '/'"},
		{"review/", "ends with '/'"},
		{"/", "starts with '/'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateEnvironmentName(tt.name)
			if tt.wantErr == "" {
				if err != nil {
					t.Errorf("ValidateEnvironmentName(%q) = %v, want nil", tt.name, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ValidateEnvironmentName(%q) = %v, want an error containing %q", tt.name, err, tt.wantErr)
			}
		})
	}
}
