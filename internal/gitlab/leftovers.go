package gitlab

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// EnvironmentState is what GitLab says about an environment: one of the
// states of its environments API, or [StateGone] when GitLab lists no such
// environment, or [StateUnknown] when GitLab was not asked.
type EnvironmentState string

// The states of [EnvironmentState]. StateAvailable, StateStopping and
// StateStopped are GitLab's own.
const (
	StateAvailable EnvironmentState = "available"
	StateStopping  EnvironmentState = "stopping"
	StateStopped   EnvironmentState = "stopped"
	StateGone      EnvironmentState = "gone"
	StateUnknown   EnvironmentState = "unknown"
)

// EnvironmentStates lists every [EnvironmentState], for documentation.
var EnvironmentStates = []EnvironmentState{StateAvailable, StateStopping, StateStopped, StateGone, StateUnknown}

// StaleStates are the states whose namespaces are leftovers: GitLab stopped
// the environment, or deleted it.
var StaleStates = []EnvironmentState{StateStopped, StateGone}

// Environment is one environment as GitLab's environments API lists it.
type Environment struct {
	ID    int64
	Name  string
	Slug  string
	State EnvironmentState
}

// Project is the GitLab project whose namespaces are looked for.
type Project struct {
	// ID is the numeric project ID, $CI_PROJECT_ID.
	ID string
	// PathSlug is $CI_PROJECT_PATH_SLUG.
	PathSlug string
}

// NamespaceMeta is what classifying a namespace needs to know of it.
type NamespaceMeta struct {
	Name        string
	UID         string
	Labels      map[string]string
	Annotations map[string]string
	Created     time.Time
	Terminating bool
}

// MatchRule says why a namespace is taken to be one of the project's.
type MatchRule string

const (
	// MatchMarked: the namespace carries this provider's ownership marker and
	// the project's ID in LabelProjectID, or, without that label, the
	// project's path slug in GitLab's app.gitlab.com/app annotation (or no
	// such annotation and a name of the historical form).
	MatchMarked MatchRule = "marked"
	// MatchHistorical: the namespace has no marker and the name GitLab's
	// certificate-based integration gave the project's environments,
	// "<project path slug>-<project id>-<environment slug>" ([DefaultNamespace]).
	MatchHistorical MatchRule = "historical"
)

// MatchRules lists every [MatchRule], for documentation.
var MatchRules = []MatchRule{MatchMarked, MatchHistorical}

// ProjectNamespace is a namespace of one of the project's environments.
type ProjectNamespace struct {
	Name string
	UID  string
	Rule MatchRule
	// Owned says the namespace carries this provider's ownership marker.
	Owned bool
	// EnvironmentName is the environment's name from the ownership marker or
	// from GitLab; empty when neither tells it.
	EnvironmentName string
	// EnvironmentSlug is the environment's slug; empty only for a shortened
	// historical name whose environment GitLab no longer lists.
	EnvironmentSlug string
	Created         time.Time
	// Age is how long the namespace has existed, in whole seconds.
	Age         time.Duration
	State       EnvironmentState
	Terminating bool
	// Stale says the namespace is a leftover: its environment is stopped or
	// gone in GitLab, and the namespace is not already being deleted.
	Stale bool
}

// ProjectNamespaces picks, from every namespace of a cluster, those that
// belong to project's environments, sorted by name, and says for each what
// GitLab knows of its environment. environments is GitLab's list of the
// project's environments; nil means GitLab was not asked, and every state is
// then [StateUnknown] and nothing is stale. A namespace that matches neither
// [MatchRule] is left out, whatever its name suggests.
func ProjectNamespaces(project Project, namespaces []NamespaceMeta, environments []Environment, now time.Time) []ProjectNamespace {
	index := newEnvironmentIndex(project, environments)
	var out []ProjectNamespace
	for _, ns := range namespaces {
		pn, ok := classify(project, ns)
		if !ok {
			continue
		}
		pn.State = StateUnknown
		if index != nil {
			env, found := index.find(pn)
			pn.State = StateGone
			if found {
				pn.State = env.State
				if pn.Rule == MatchHistorical {
					// GitLab's own names are authoritative for a namespace without our marker.
					pn.EnvironmentName, pn.EnvironmentSlug = env.Name, env.Slug
				}
			}
		}
		if age := now.Sub(ns.Created).Truncate(time.Second); age > 0 && !ns.Created.IsZero() {
			pn.Age = age
		}
		pn.Stale = !pn.Terminating && slices.Contains(StaleStates, pn.State)
		out = append(out, pn)
	}
	slices.SortFunc(out, func(a, b ProjectNamespace) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// classify applies the match rules to one namespace.
func classify(project Project, ns NamespaceMeta) (ProjectNamespace, bool) {
	if IsProtectedNamespace(ns.Name) {
		return ProjectNamespace{}, false
	}
	pn := ProjectNamespace{Name: ns.Name, UID: ns.UID, Created: ns.Created, Terminating: ns.Terminating}
	historicalSlug, historical := HistoricalNamespaceSlug(ns.Name, project)
	marked := ns.Labels[LabelManagedBy] == ManagedByValue && ns.Annotations[AnnotationEnvironment] != ""
	if marked {
		if !markedForProject(ns, project, historical) {
			return ProjectNamespace{}, false // another project's environment
		}
		pn.Rule, pn.Owned = MatchMarked, true
		pn.EnvironmentName = ns.Annotations[AnnotationEnvironment]
		pn.EnvironmentSlug = ns.Labels[LabelEnvironmentSlug]
		if pn.EnvironmentSlug == "" {
			pn.EnvironmentSlug = ns.Annotations[AnnotationGitLabEnv]
		}
		return pn, true
	}
	if !historical {
		return ProjectNamespace{}, false
	}
	pn.Rule, pn.EnvironmentSlug = MatchHistorical, historicalSlug
	return pn, true
}

// markedForProject reports whether a marked namespace is one of project's: by
// its project ID label when it has one (ci_job_access writes it), else by
// GitLab's app annotation, else by a historical name.
func markedForProject(ns NamespaceMeta, project Project, historical bool) bool {
	if id, ok := ns.Labels[LabelProjectID]; ok {
		return id == project.ID
	}
	app, hasApp := ns.Annotations[AnnotationGitLabApp]
	if hasApp {
		return app == project.PathSlug && project.PathSlug != ""
	}
	return historical
}

// environmentIndex finds GitLab's environment of a namespace.
type environmentIndex struct {
	byName, bySlug, byNamespace map[string]Environment
}

func newEnvironmentIndex(project Project, environments []Environment) *environmentIndex {
	if environments == nil {
		return nil
	}
	idx := &environmentIndex{byName: map[string]Environment{}, bySlug: map[string]Environment{}, byNamespace: map[string]Environment{}}
	for _, env := range environments {
		idx.byName[env.Name] = env
		idx.bySlug[env.Slug] = env
		if project.ID != "" && project.PathSlug != "" && env.Slug != "" {
			idx.byNamespace[DefaultNamespace(project.PathSlug, project.ID, env.Slug)] = env
		}
	}
	return idx
}

// find looks a marked namespace up by its environment's name, then slug; a
// historical one by the name GitLab's environments give.
func (idx *environmentIndex) find(pn ProjectNamespace) (Environment, bool) {
	if pn.Rule == MatchMarked {
		if env, ok := idx.byName[pn.EnvironmentName]; ok {
			return env, true
		}
		env, ok := idx.bySlug[pn.EnvironmentSlug]
		return env, ok && pn.EnvironmentSlug != ""
	}
	env, ok := idx.byNamespace[pn.Name]
	return env, ok
}

// HistoricalNamespaceSlug reports whether ns is a name [DefaultNamespace]
// gives an environment of project, and returns the environment's slug when
// the name holds all of it. A name shortened to 63 characters (a long project
// path) has lost the end of the slug and ends with a hash; it matches when
// its start is the project's prefix, with an empty slug.
func HistoricalNamespaceSlug(ns string, project Project) (string, bool) {
	if project.ID == "" || project.PathSlug == "" || !isDigits(project.ID) {
		return "", false
	}
	prefix := sanitizeLabel(project.PathSlug+"-"+project.ID) + "-"
	// A cut name can also read as a whole one ("...-r-203b30fb" has the form of the slug
	// "r-203b30fb"); the cut is the likelier reading, and GitLab's list settles it.
	if isShortenedHistorical(ns, prefix) {
		return "", true
	}
	if rest, ok := strings.CutPrefix(ns, prefix); ok && IsEnvironmentSlug(rest) && DefaultNamespace(project.PathSlug, project.ID, rest) == ns {
		return rest, true
	}
	return "", false
}

// isShortenedHistorical reports whether ns has the shape of a DefaultNamespace
// name that was cut: the first characters of prefix+slug (trailing '-'
// dropped), '-', and 8 hex digits; possible only when prefix plus the longest
// slug exceeds the limit.
func isShortenedHistorical(ns, prefix string) bool {
	const headMax = MaxNamespaceLength - namespaceHashLength - 1
	if len(prefix)+MaxSlugLength <= MaxNamespaceLength || len(ns) <= namespaceHashLength+1 {
		return false
	}
	head, hash := ns[:len(ns)-namespaceHashLength-1], ns[len(ns)-namespaceHashLength:]
	if ns[len(head)] != '-' || !isLowerHex(hash) || len(head) > headMax || len(head) < headMax-2 {
		return false
	}
	if len(head) <= len(prefix) {
		return strings.HasPrefix(prefix, head) && strings.Trim(prefix[len(head):min(len(prefix), headMax)], "-") == ""
	}
	slugHead, ok := strings.CutPrefix(head, prefix)
	return ok && slugHead[0] >= 'a' && slugHead[0] <= 'z' && sanitizeLabel(slugHead) == slugHead
}

// IsEnvironmentSlug reports whether s has the form of a slug GitLab
// generates: ^[a-z]([a-z0-9-]{0,22}[a-z0-9])?$.
func IsEnvironmentSlug(s string) bool {
	if s == "" || len(s) > MaxSlugLength || s[0] < 'a' || s[0] > 'z' || strings.HasSuffix(s, "-") {
		return false
	}
	return sanitizeLabel(s) == s
}

// ValidateProjectID checks that id is a numeric GitLab project ID.
func ValidateProjectID(id string) error {
	if !isDigits(id) {
		return fmt.Errorf("project ID %q is not a number; it is the numeric ID GitLab shows on the project's overview page and CI jobs get as $%s, e.g. 4242", id, EnvProjectID)
	}
	return nil
}

// ValidateProjectPathSlug checks that slug has the form of
// $CI_PROJECT_PATH_SLUG: lowercase letters, digits and '-', at most 63
// characters, not starting or ending with '-'.
func ValidateProjectPathSlug(slug string) error {
	if slug == "" || len(slug) > MaxNamespaceLength || sanitizeLabel(slug) != slug {
		return fmt.Errorf("project path slug %q is not of the form of $%s: lowercase letters a-z, digits 0-9 and '-', at most 63 characters, "+
			"not starting or ending with '-' (the project path my-group/My.App has the slug my-group-my-app)", slug, EnvProjectPathSlug)
	}
	return nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func isLowerHex(s string) bool {
	for _, r := range s {
		if !('0' <= r && r <= '9') && !('a' <= r && r <= 'f') {
			return false
		}
	}
	return s != ""
}
