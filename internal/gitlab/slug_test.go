package gitlab

import (
	"regexp"
	"strings"
	"testing"
)

var slugPattern = regexp.MustCompile(`^[a-z]([a-z0-9-]{0,22}[a-z0-9])?$`)

// TestSlug_followsGitLabsAlgorithm pins the suffix, as GitLab's own tests do,
// to check every other step of the algorithm.
func TestSlug_followsGitLabsAlgorithm(t *testing.T) {
	pinned := func(string) string { return "q517sa" }
	tests := []struct {
		name string
		want string
	}{
		{"production", "production"},
		{"PRODUCTION", "production-q517sa"},
		{"staging-1234567890123456", "staging-1234567890123456"},
		{"staging-12345678901234567", "staging-123456789-q517sa"},
		{"staging-1234567890123456-", "staging-123456789-q517sa"},
		{"9-staging-123456789012345", "env-9-staging-123-q517sa"},
		{"review/1-foo", "review-1-foo-q517sa"},
		{"1-foo", "env-1-foo-q517sa"},
		{"1/foo", "env-1-foo-q517sa"},
		{"foo-", "foo"},
		{"foo--bar", "foo-bar-q517sa"},
		{"foo**bar", "foo-bar-q517sa"},
		{"*-foo", "env-foo-q517sa"},
		{"staging-12345678-", "staging-12345678"},
		{"staging-12345678-01234567", "staging-12345678-q517sa"},
		{"", "env-q517sa"},
		{"-", "env-q517sa"},
		{"review/ünïcode", "review-n-code-q517sa"},
		{"a", "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := generateSlug(tt.name, pinned); got != tt.want {
				t.Errorf("generateSlug(%q) = %q, want %q", tt.name, got, tt.want)
			}
		})
	}
}

// TestSlug_suffixIsGitLabsBase36OfSHA256 checks the suffix against values
// computed independently from GitLab's
// Digest::SHA2.hexdigest(name).to_i(16).to_s(36).last(6).
func TestSlug_suffixIsGitLabsBase36OfSHA256(t *testing.T) {
	allA := make([]byte, 32)
	for i := range allA {
		allA[i] = 0xaa
	}
	if got := base36Tail(allA); got != "q517sa" {
		t.Errorf("base36Tail(0xaa...) = %q, want %q", got, "q517sa")
	}
	if got := base36Tail([]byte{1}); got != "000001" {
		t.Errorf("base36Tail(1) = %q, want zero padded %q", got, "000001")
	}

	tests := []struct {
		name string
		want string
	}{
		{"production", "production"},
		{"Production", "production-iis43c"},
		{"review/feature-login", "review-feature-lo-qiv329"},
		{"review/1234-a-very-long-branch-name-for-testing", "review-1234-a-ver-cq5cnf"},
		{"1-foo", "env-1-foo-1k46wz"},
		{"", "env-qhkd3p"},
		{"staging-12345678901234567", "staging-123456789-s729ne"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EnvironmentSlug(tt.name); got != tt.want {
				t.Errorf("EnvironmentSlug(%q) = %q, want %q", tt.name, got, tt.want)
			}
		})
	}
}

func TestSlug_longNamesGetAStableSuffix(t *testing.T) {
	tests := []struct {
		name, other string
	}{
		{"review/feature-one-with-a-long-name", "review/feature-one-with-a-long-name-2"},
		{"Review", "review-"},
		{"review/a", "review-a-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first, again, other := EnvironmentSlug(tt.name), EnvironmentSlug(tt.name), EnvironmentSlug(tt.other)
			if first != again {
				t.Errorf("EnvironmentSlug(%q) is not stable: %q then %q", tt.name, first, again)
			}
			if first == other {
				t.Errorf("EnvironmentSlug(%q) == EnvironmentSlug(%q) == %q", tt.name, tt.other, first)
			}
			if len(first) > MaxSlugLength {
				t.Errorf("EnvironmentSlug(%q) = %q, longer than %d", tt.name, first, MaxSlugLength)
			}
		})
	}
}

func TestSlugFor_prefersTheSlugGitLabReports(t *testing.T) {
	ci := CIMetadata{EnvironmentName: "review/feature", EnvironmentSlug: "review-feature-abc123"}
	tests := []struct {
		desc string
		name string
		ci   CIMetadata
		want string
	}{
		{"same environment", "review/feature", ci, "review-feature-abc123"},
		{"other environment", "production", ci, "production"},
		{"outside CI", "review/feature", CIMetadata{}, EnvironmentSlug("review/feature")},
		{"empty slug from CI", "review/feature", CIMetadata{EnvironmentName: "review/feature"}, EnvironmentSlug("review/feature")},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if got := SlugFor(tt.name, tt.ci); got != tt.want {
				t.Errorf("SlugFor(%q) = %q, want %q", tt.name, got, tt.want)
			}
		})
	}
}

func FuzzEnvironmentSlug(f *testing.F) {
	for _, seed := range []string{"", "a", "-", "production", "review/feature-x", "9", "ÄÖÜ", strings.Repeat("x-", 40), "a--", "Z"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, name string) {
		slug := EnvironmentSlug(name)
		if !slugPattern.MatchString(slug) {
			t.Errorf("EnvironmentSlug(%q) = %q, does not match %s", name, slug, slugPattern)
		}
		if ValidateNamespace(slug) != nil {
			t.Errorf("EnvironmentSlug(%q) = %q, not a DNS-1123 label", name, slug)
		}
	})
}
