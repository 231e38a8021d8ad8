package gitlab

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestDefaultNamespace_followsGitLabsConvention(t *testing.T) {
	tests := []struct {
		desc                            string
		projectPathSlug, projectID, env string
		want                            string
	}{
		{"all parts", "group-app", "42", "review-x", "group-app-42-review-x"},
		{"no environment", "group-app", "42", "", "group-app-42"},
		{"no project id", "group-app", "", "production", "group-app-production"},
		{"only environment", "", "", "production", "production"},
		{"nothing", "", "", "", ""},
		{"uppercase and dots", "Group.App", "7", "prod", "group-app-7-prod"},
		{"double dashes are kept", "my--app", "7", "prod", "my--app-7-prod"},
		{"leading and trailing junk", "_app", "7", "prod_", "app-7-prod"},
		{"unicode becomes one dash per character", "äpp", "1", "x", "pp-1-x"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if got := DefaultNamespace(tt.projectPathSlug, tt.projectID, tt.env); got != tt.want {
				t.Errorf("DefaultNamespace(%q, %q, %q) = %q, want %q", tt.projectPathSlug, tt.projectID, tt.env, got, tt.want)
			}
		})
	}
}

func TestDefaultNamespace_longNamesAreShortenedWithoutCollisions(t *testing.T) {
	long := strings.Repeat("very-long-group-name-", 3)
	tests := []struct {
		desc         string
		a, b         [3]string
		wantSameHead bool
	}{
		{"same prefix, different environment", [3]string{long, "1", "review-a"}, [3]string{long, "1", "review-b"}, true},
		{"same prefix, different project", [3]string{long, "1", "prod"}, [3]string{long, "2", "prod"}, true},
		{"cut lands on a dash", [3]string{strings.Repeat("a", 53) + "-", "1", "x"}, [3]string{strings.Repeat("a", 53) + "-", "2", "x"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			a := DefaultNamespace(tt.a[0], tt.a[1], tt.a[2])
			b := DefaultNamespace(tt.b[0], tt.b[1], tt.b[2])
			for _, ns := range []string{a, b} {
				if err := ValidateNamespace(ns); err != nil {
					t.Errorf("DefaultNamespace gave an invalid namespace: %v", err)
				}
			}
			if a == b {
				t.Errorf("two different long names both became %q", a)
			}
			if again := DefaultNamespace(tt.a[0], tt.a[1], tt.a[2]); again != a {
				t.Errorf("DefaultNamespace is not stable: %q then %q", a, again)
			}
			if tt.wantSameHead && a[:40] != b[:40] {
				t.Errorf("shortened names %q and %q should keep the readable prefix", a, b)
			}
		})
	}
}

func FuzzDefaultNamespace(f *testing.F) {
	f.Add("group-app", "42", "review-x")
	f.Add(strings.Repeat("x", 80), "1", "y")
	f.Add("---", "", "---")
	f.Add("ÄÖÜ", "1", strings.Repeat("-a", 40))
	f.Fuzz(func(t *testing.T, projectPathSlug, projectID, envSlug string) {
		ns := DefaultNamespace(projectPathSlug, projectID, envSlug)
		if ns == "" {
			return
		}
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			t.Errorf("DefaultNamespace(%q, %q, %q) = %q: %v", projectPathSlug, projectID, envSlug, ns, errs)
		}
	})
}

func TestValidateNamespace_saysWhichRuleIsBroken(t *testing.T) {
	tests := []struct {
		ns      string
		wantErr string
	}{
		{"review-x", ""},
		{"a", ""},
		{"1abc", ""},
		{strings.Repeat("a", 63), ""},
		{"", "must not be empty"},
		{strings.Repeat("a", 64), "at most 63 characters"},
		{"Review", `contains 'R' at position 1`},
		{"review_x", `contains '_' at position 7`},
		{"rév", `contains 'é' at position 2`},
		{"-review", "starts with '-'"},
		{"review-", "ends with '-'"},
	}
	for _, tt := range tests {
		t.Run(tt.ns, func(t *testing.T) {
			err := ValidateNamespace(tt.ns)
			if tt.wantErr == "" {
				if err != nil {
					t.Errorf("ValidateNamespace(%q) = %v, want nil", tt.ns, err)
				}
			} else if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ValidateNamespace(%q) = %v, want an error containing %q", tt.ns, err, tt.wantErr)
			}
			// Agree with Kubernetes' own validation.
			if valid := len(validation.IsDNS1123Label(tt.ns)) == 0; valid != (err == nil) {
				t.Errorf("ValidateNamespace(%q) = %v, but Kubernetes says valid=%v", tt.ns, err, valid)
			}
		})
	}
}

func TestIsProtectedNamespace_coversKubernetesOwnNamespaces(t *testing.T) {
	tests := []struct {
		ns   string
		want bool
	}{
		{"default", true},
		{"kube-system", true},
		{"kube-public", true},
		{"kube-node-lease", true},
		{"kube-systems", false},
		{"review-x", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.ns, func(t *testing.T) {
			if got := IsProtectedNamespace(tt.ns); got != tt.want {
				t.Errorf("IsProtectedNamespace(%q) = %v, want %v", tt.ns, got, tt.want)
			}
		})
	}
}
