package gitlab

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxEnvironmentNameLength is the longest environment name GitLab accepts.
const MaxEnvironmentNameLength = 255

// EnvironmentNameRules describes a valid environment name in the words the
// validation errors use, for attribute descriptions.
const EnvironmentNameRules = "at most 255 characters: letters, digits, spaces, and '-', '_', '/', '$', '{', '}', '.', not starting or ending with '/'"

// environmentNamePunctuation are the non-alphanumeric characters GitLab
// allows in environment names (Gitlab::Regex.environment_name_regex).
const environmentNamePunctuation = " -_/${}."

// ValidateEnvironmentName checks name against GitLab's rules for environment
// names and says what is wrong and what is allowed. Letters and digits are
// ASCII only, as in GitLab.
func ValidateEnvironmentName(name string) error {
	if name == "" {
		return errors.New("environment name must not be empty; it can be " + EnvironmentNameRules)
	}
	if n := utf8.RuneCountInString(name); n > MaxEnvironmentNameLength {
		return fmt.Errorf("environment name is %d characters long; it can be at most %d characters", n, MaxEnvironmentNameLength)
	}
	position := 0
	for _, r := range name {
		position++
		if isASCIIAlphanumeric(r) || strings.ContainsRune(environmentNamePunctuation, r) {
			continue
		}
		return fmt.Errorf("environment name %q contains %q at position %d; it can contain only letters, digits, spaces, and '-', '_', '/', '$', '{', '}', '.'", name, r, position)
	}
	if strings.HasPrefix(name, "/") {
		return fmt.Errorf("environment name %q starts with '/'; it must not start or end with '/'", name)
	}
	if strings.HasSuffix(name, "/") {
		return fmt.Errorf("environment name %q ends with '/'; it must not start or end with '/'", name)
	}
	return nil
}

func isASCIIAlphanumeric(r rune) bool {
	return ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9')
}
