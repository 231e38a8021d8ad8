package gitlab

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// MaxNamespaceLength is the longest Kubernetes namespace name (a DNS-1123
// label).
const MaxNamespaceLength = 63

// NamespaceRules describes a valid namespace name in the words the
// validation errors use, for attribute descriptions.
const NamespaceRules = "at most 63 characters: lowercase letters a-z, digits 0-9 and '-', starting and ending with a letter or digit"

// namespaceHashLength is how many hex characters of SHA-256 a shortened
// namespace ends with.
const namespaceHashLength = 8

// ProtectedNamespaces are the namespaces Kubernetes itself relies on. The
// provider never creates, adopts or deletes them as an environment namespace.
var ProtectedNamespaces = []string{"default", "kube-system", "kube-public", "kube-node-lease"}

// IsProtectedNamespace reports whether ns is one of [ProtectedNamespaces].
func IsProtectedNamespace(ns string) bool {
	return slices.Contains(ProtectedNamespaces, ns)
}

// DefaultNamespace returns the namespace GitLab's Kubernetes integration
// historically gave an environment: "<project path slug>-<project id>-<env
// slug>", leaving out empty parts.
//
// The name is lowercased, every character outside a-z0-9- becomes '-', and
// leading and trailing '-' are dropped, so the result is a valid DNS-1123
// label, or "" when every part is empty. A name longer than 63 characters is
// cut and ends with '-' and the first 8 hex characters of the SHA-256 of the
// whole name, so two long names that share a prefix still get different
// namespaces, and the same inputs always give the same namespace.
func DefaultNamespace(projectPathSlug, projectID, envSlug string) string {
	parts := make([]string, 0, 3)
	for _, part := range []string{projectPathSlug, projectID, envSlug} {
		if part != "" {
			parts = append(parts, part)
		}
	}
	full := sanitizeLabel(strings.Join(parts, "-"))
	if len(full) <= MaxNamespaceLength {
		return full
	}
	sum := sha256.Sum256([]byte(full))
	head := strings.TrimRight(full[:MaxNamespaceLength-namespaceHashLength-1], "-")
	return head + "-" + hex.EncodeToString(sum[:])[:namespaceHashLength]
}

// sanitizeLabel lowercases s, turns every rune outside a-z0-9- into '-' and
// trims '-' from both ends. Runs of '-' are kept, as GitLab keeps them.
func sanitizeLabel(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range strings.ToLower(s) {
		if ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return strings.Trim(b.String(), "-")
}

// ValidateNamespace checks that ns is a valid namespace name (a DNS-1123
// label) and says which rule it breaks. It does not reject
// [ProtectedNamespaces]; callers decide what a protected namespace means for
// them.
func ValidateNamespace(ns string) error {
	if ns == "" {
		return errors.New("namespace must not be empty; " + NamespaceRules)
	}
	if len(ns) > MaxNamespaceLength {
		return fmt.Errorf("namespace %q is %d characters long; a namespace can be at most %d characters", ns, len(ns), MaxNamespaceLength)
	}
	position := 0
	for _, r := range ns {
		position++
		if !('a' <= r && r <= 'z') && !('0' <= r && r <= '9') && r != '-' {
			return fmt.Errorf("namespace %q contains %q at position %d; a namespace can contain only lowercase letters a-z, digits 0-9 and '-'", ns, r, position)
		}
	}
	if ns[0] == '-' {
		return fmt.Errorf("namespace %q starts with '-'; a namespace must start with a lowercase letter or digit", ns)
	}
	if ns[len(ns)-1] == '-' {
		return fmt.Errorf("namespace %q ends with '-'; a namespace must end with a lowercase letter or digit", ns)
	}
	return nil
}
