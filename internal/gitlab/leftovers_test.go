package gitlab

import (
	"maps"
	"strings"
	"testing"
	"time"
)

var (
	testProject = Project{ID: "4242", PathSlug: "my-group-my-app"}
	// A project whose prefix leaves too little room for a whole slug.
	longProject = Project{ID: "987654", PathSlug: "a-very-long-group-name-with-subgroups-and-app"}
	now         = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
)

// marked returns a namespace as gitlabk8s_environment writes it in a job of project.
func marked(name, envName, projectPathSlug string, created time.Time) NamespaceMeta {
	slug := EnvironmentSlug(envName)
	return NamespaceMeta{Name: name, UID: "uid-" + name, Labels: OwnershipLabels(slug),
		Annotations: OwnershipAnnotations(envName, slug, projectPathSlug), Created: created}
}

func withLabel(ns NamespaceMeta, key, value string) NamespaceMeta {
	ns.Labels[key] = value
	return ns
}

func plain(name string, created time.Time) NamespaceMeta {
	return NamespaceMeta{Name: name, UID: "uid-" + name, Created: created}
}

func byName(pns []ProjectNamespace) map[string]ProjectNamespace {
	out := map[string]ProjectNamespace{}
	for _, pn := range pns {
		out[pn.Name] = pn
	}
	return out
}

func TestProjectNamespaces_matchesMarkedAndHistoricalNamesOnly(t *testing.T) {
	created := now.Add(-72 * time.Hour)
	ours := DefaultNamespace(testProject.PathSlug, testProject.ID, EnvironmentSlug("review/feature-a"))
	historical := DefaultNamespace(testProject.PathSlug, testProject.ID, "review-old-x7k2pq")
	namespaces := []NamespaceMeta{
		marked(ours, "review/feature-a", testProject.PathSlug, created),
		marked("custom-name", "review/custom", testProject.PathSlug, created),
		plain(historical, created.Add(time.Hour)),
		// Not ours: another project's environment, a look-alike without the project ID, a
		// name with our prefix but no slug shape, Kubernetes' own, a marker without the app
		// annotation on a name that is not historical.
		marked("other-app-1-review-a", "review/a", "other-app", created),
		marked(DefaultNamespace(testProject.PathSlug, testProject.ID, "review-b"), "review/b", "other-app", created),
		plain("my-group-my-app-review-x", created),
		plain("my-group-my-app-4242-Review_X", created),
		plain("my-group-my-app-4242-1abc", created),
		plain("my-group-my-app-42420-review-x", created),
		plain("kube-system", created),
		marked("no-app-annotation", "review/c", "", created),
		// The project ID label, when there, decides over the app annotation.
		withLabel(marked("same-app-other-id", "review/d", testProject.PathSlug, created), LabelProjectID, "4243"),
		withLabel(marked("our-id-no-app", "review/e", "", created), LabelProjectID, testProject.ID),
		{Name: "ingress-nginx", Labels: map[string]string{LabelManagedBy: "Helm"}, Created: created},
	}
	got := byName(ProjectNamespaces(testProject, namespaces, nil, now))
	want := map[string]ProjectNamespace{
		ours: {Name: ours, UID: "uid-" + ours, Rule: MatchMarked, Owned: true, EnvironmentName: "review/feature-a",
			EnvironmentSlug: EnvironmentSlug("review/feature-a"), Created: created, Age: 72 * time.Hour, State: StateUnknown},
		"custom-name": {Name: "custom-name", UID: "uid-custom-name", Rule: MatchMarked, Owned: true, EnvironmentName: "review/custom",
			EnvironmentSlug: EnvironmentSlug("review/custom"), Created: created, Age: 72 * time.Hour, State: StateUnknown},
		historical: {Name: historical, UID: "uid-" + historical, Rule: MatchHistorical, EnvironmentSlug: "review-old-x7k2pq",
			Created: created.Add(time.Hour), Age: 71 * time.Hour, State: StateUnknown},
		"our-id-no-app": {Name: "our-id-no-app", UID: "uid-our-id-no-app", Rule: MatchMarked, Owned: true, EnvironmentName: "review/e",
			EnvironmentSlug: EnvironmentSlug("review/e"), Created: created, Age: 72 * time.Hour, State: StateUnknown},
	}
	if !maps.Equal(got, want) {
		t.Errorf("ProjectNamespaces =\n%+v\nwant\n%+v", got, want)
	}
}

func TestProjectNamespaces_gitLabsStateDecidesWhatIsStale(t *testing.T) {
	created := now.Add(-time.Hour)
	ns := func(slug string) string { return DefaultNamespace(testProject.PathSlug, testProject.ID, slug) }
	namespaces := []NamespaceMeta{
		marked(ns(EnvironmentSlug("review/live")), "review/live", testProject.PathSlug, created),
		marked(ns(EnvironmentSlug("review/stopping")), "review/stopping", testProject.PathSlug, created),
		marked(ns(EnvironmentSlug("review/stopped")), "review/stopped", testProject.PathSlug, created),
		marked(ns(EnvironmentSlug("review/deleted")), "review/deleted", testProject.PathSlug, created),
		plain(ns("review-hist-live-abc123"), created),
		plain(ns("review-hist-stop-abc123"), created),
		plain(ns("review-hist-gone-abc123"), created),
		{Name: ns("review-leaving-abc123"), Created: created, Terminating: true},
		// Marked, and found by its slug: an older GitLab gave it a random suffix.
		marked("renamed-slug", "review/random", testProject.PathSlug, created),
	}
	environments := []Environment{
		{ID: 1, Name: "review/live", Slug: EnvironmentSlug("review/live"), State: StateAvailable},
		{ID: 2, Name: "review/stopping", Slug: EnvironmentSlug("review/stopping"), State: StateStopping},
		{ID: 3, Name: "review/stopped", Slug: EnvironmentSlug("review/stopped"), State: StateStopped},
		{ID: 4, Name: "review/hist-live", Slug: "review-hist-live-abc123", State: StateAvailable},
		{ID: 5, Name: "review/hist-stop", Slug: "review-hist-stop-abc123", State: StateStopped},
		{ID: 6, Name: "review/leaving", Slug: "review-leaving-abc123", State: StateStopped},
		{ID: 7, Name: "review/random-renamed", Slug: EnvironmentSlug("review/random"), State: StateAvailable},
	}
	got := byName(ProjectNamespaces(testProject, namespaces, environments, now))
	tests := []struct {
		ns        string
		state     EnvironmentState
		stale     bool
		envName   string
		envSlug   string
		owned     bool
		ruleWants MatchRule
	}{
		{ns(EnvironmentSlug("review/live")), StateAvailable, false, "review/live", EnvironmentSlug("review/live"), true, MatchMarked},
		{ns(EnvironmentSlug("review/stopping")), StateStopping, false, "review/stopping", EnvironmentSlug("review/stopping"), true, MatchMarked},
		{ns(EnvironmentSlug("review/stopped")), StateStopped, true, "review/stopped", EnvironmentSlug("review/stopped"), true, MatchMarked},
		{ns(EnvironmentSlug("review/deleted")), StateGone, true, "review/deleted", EnvironmentSlug("review/deleted"), true, MatchMarked},
		{ns("review-hist-live-abc123"), StateAvailable, false, "review/hist-live", "review-hist-live-abc123", false, MatchHistorical},
		{ns("review-hist-stop-abc123"), StateStopped, true, "review/hist-stop", "review-hist-stop-abc123", false, MatchHistorical},
		{ns("review-hist-gone-abc123"), StateGone, true, "", "review-hist-gone-abc123", false, MatchHistorical},
		{ns("review-leaving-abc123"), StateStopped, false, "review/leaving", "review-leaving-abc123", false, MatchHistorical},
		{"renamed-slug", StateAvailable, false, "review/random", EnvironmentSlug("review/random"), true, MatchMarked},
	}
	if len(got) != len(tests) {
		t.Errorf("got %d namespaces, want %d: %v", len(got), len(tests), got)
	}
	for _, tt := range tests {
		pn, ok := got[tt.ns]
		if !ok {
			t.Errorf("%s: not listed", tt.ns)
			continue
		}
		if pn.State != tt.state || pn.Stale != tt.stale || pn.EnvironmentName != tt.envName || pn.EnvironmentSlug != tt.envSlug || pn.Owned != tt.owned || pn.Rule != tt.ruleWants {
			t.Errorf("%s: state %s stale %v name %q slug %q owned %v rule %s; want %s %v %q %q %v %s",
				tt.ns, pn.State, pn.Stale, pn.EnvironmentName, pn.EnvironmentSlug, pn.Owned, pn.Rule, tt.state, tt.stale, tt.envName, tt.envSlug, tt.owned, tt.ruleWants)
		}
	}
}

func TestProjectNamespaces_withoutGitLabNothingIsStale(t *testing.T) {
	ns := DefaultNamespace(testProject.PathSlug, testProject.ID, "review-x-abc123")
	for _, envs := range [][]Environment{nil} {
		for _, pn := range ProjectNamespaces(testProject, []NamespaceMeta{plain(ns, now.Add(-time.Hour))}, envs, now) {
			if pn.Stale || pn.State != StateUnknown {
				t.Errorf("without GitLab's list: %+v, want state unknown and not stale", pn)
			}
		}
	}
	// An empty list is an answer: every environment is gone.
	for _, pn := range ProjectNamespaces(testProject, []NamespaceMeta{plain(ns, now.Add(-time.Hour))}, []Environment{}, now) {
		if !pn.Stale || pn.State != StateGone {
			t.Errorf("with an empty list: %+v, want gone and stale", pn)
		}
	}
}

func TestProjectNamespaces_ageIsWholeSecondsAndNeverNegative(t *testing.T) {
	ns := DefaultNamespace(testProject.PathSlug, testProject.ID, "review-x-abc123")
	tests := []struct {
		created time.Time
		want    time.Duration
	}{
		{now.Add(-90*time.Second - 300*time.Millisecond), 90 * time.Second},
		{now.Add(time.Minute), 0}, // clock skew between the cluster and the runner
		{time.Time{}, 0},
	}
	for _, tt := range tests {
		got := ProjectNamespaces(testProject, []NamespaceMeta{plain(ns, tt.created)}, nil, now)
		if len(got) != 1 || got[0].Age != tt.want {
			t.Errorf("created %v: %+v, want age %v", tt.created, got, tt.want)
		}
	}
}

func TestHistoricalNamespaceSlug_shortenedNames(t *testing.T) {
	slug := EnvironmentSlug("review/a-rather-long-branch-name")
	shortened := DefaultNamespace(longProject.PathSlug, longProject.ID, slug)
	if len(shortened) != MaxNamespaceLength && len(shortened) < MaxNamespaceLength-2 {
		t.Fatalf("fixture: %q (%d) is not a shortened name", shortened, len(shortened))
	}
	tests := []struct {
		desc     string
		ns       string
		project  Project
		wantSlug string
		wantOK   bool
	}{
		{"whole name", DefaultNamespace(testProject.PathSlug, testProject.ID, slug), testProject, slug, true},
		{"shortened name", shortened, longProject, "", true},
		{"shortened name of another project", shortened, Project{ID: "987655", PathSlug: longProject.PathSlug}, "", false},
		{"a whole slug where a cut could be", longProject.PathSlug + "-" + longProject.ID + "-review-x", longProject, "review-x", true},
		{"cut too early", shortened[:40] + shortened[len(shortened)-9:], longProject, "", false},
		// A short prefix always leaves room for the whole slug, so nothing of its is ever cut.
		{"short project never shortens", "my-group-my-app-4242-review-a-rather-lon-0123abcd", testProject, "", false},
		{"slug of an uppercase name", "my-group-my-app-4242-Review", testProject, "", false},
		{"slug too long", "my-group-my-app-4242-" + strings.Repeat("a", 25), testProject, "", false},
		{"no project", "my-group-my-app-4242-review", Project{}, "", false},
		{"non-numeric project id", "my-group-my-app-x-review", Project{ID: "x", PathSlug: "my-group-my-app"}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			gotSlug, gotOK := HistoricalNamespaceSlug(tt.ns, tt.project)
			if gotSlug != tt.wantSlug || gotOK != tt.wantOK {
				t.Errorf("HistoricalNamespaceSlug(%q) = %q, %v; want %q, %v", tt.ns, gotSlug, gotOK, tt.wantSlug, tt.wantOK)
			}
		})
	}

	// GitLab's list gives the shortened name its slug, name and state back.
	envs := []Environment{{ID: 9, Name: "review/a-rather-long-branch-name", Slug: slug, State: StateStopped}}
	got := ProjectNamespaces(longProject, []NamespaceMeta{plain(shortened, now)}, envs, now)
	if len(got) != 1 || got[0].EnvironmentSlug != slug || got[0].EnvironmentName != envs[0].Name || !got[0].Stale {
		t.Errorf("shortened name with GitLab's list: %+v, want slug %s, name %s, stale", got, slug, envs[0].Name)
	}
}

func TestValidateProject_saysWhatTheValueShouldBe(t *testing.T) {
	for _, id := range []string{"", "12a", "-1", " 42"} {
		if err := ValidateProjectID(id); err == nil || !strings.Contains(err.Error(), "CI_PROJECT_ID") {
			t.Errorf("ValidateProjectID(%q) = %v, want an error naming CI_PROJECT_ID", id, err)
		}
	}
	if err := ValidateProjectID("4242"); err != nil {
		t.Errorf("ValidateProjectID(4242) = %v", err)
	}
	for _, slug := range []string{"", "My-App", "my/app", "-app", "app-", strings.Repeat("a", 64)} {
		if err := ValidateProjectPathSlug(slug); err == nil || !strings.Contains(err.Error(), "CI_PROJECT_PATH_SLUG") {
			t.Errorf("ValidateProjectPathSlug(%q) = %v, want an error naming CI_PROJECT_PATH_SLUG", slug, err)
		}
	}
	if err := ValidateProjectPathSlug("my-group-my--app"); err != nil {
		t.Errorf("ValidateProjectPathSlug(my-group-my--app) = %v", err)
	}
}
