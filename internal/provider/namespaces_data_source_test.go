package provider

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlab"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlabstate"
)

const namespacesAddr = "data.gitlabk8s_namespaces.test"

const testGitLabToken = "glpat-namespaces-test"

// namespacesTestProject gives a test its own GitLab project, so the namespaces
// it creates are never another test's.
func namespacesTestProject(t *testing.T) gitlab.Project {
	sum := sha256.Sum256([]byte(t.Name()))
	return gitlab.Project{ID: fmt.Sprint(100000 + binary.BigEndian.Uint32(sum[:4])%900000), PathSlug: "acc-ns-" + fmt.Sprintf("%x", sum[4:8])}
}

// gitlabStandIn serves the project's environments as GitLab does.
func gitlabStandIn(t *testing.T, project gitlab.Project) (*gitlabstate.Server, string) {
	t.Helper()
	srv := gitlabstate.New(gitlabstate.Config{ProjectID: project.ID,
		Users: []gitlabstate.User{{Username: "janitor", PersonalAccessToken: testGitLabToken}}})
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return srv, hs.URL + "/api/v4"
}

// namespacesConfig configures the data source; empty values are left out.
func namespacesConfig(project gitlab.Project, apiURL, token string) string {
	var b strings.Builder
	b.WriteString("data \"gitlabk8s_namespaces\" \"test\" {\n")
	for _, attr := range [][2]string{{"project_id", project.ID}, {"project_path_slug", project.PathSlug}, {"gitlab_api_url", apiURL}, {"gitlab_token", token}} {
		if attr[1] != "" {
			fmt.Fprintf(&b, "  %s = %q\n", attr[0], attr[1])
		}
	}
	b.WriteString("}\n")
	return b.String()
}

// createNamespaces creates the namespaces and deletes them when the test ends.
func createNamespaces(t *testing.T, namespaces ...*corev1.Namespace) {
	t.Helper()
	client := adminClient(t)
	for _, ns := range namespaces {
		cleanupNamespace(t, client, ns.Name)
		if _, err := client.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

func markedNamespace(name, envName, projectPathSlug string) *corev1.Namespace {
	slug := gitlab.EnvironmentSlug(envName)
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: gitlab.OwnershipLabels(slug),
		Annotations: gitlab.OwnershipAnnotations(envName, slug, projectPathSlug)}}
}

// expectNamespaces checks the listed namespaces' attributes: want maps each
// namespace to the attributes it must have; no other namespace may be listed.
func expectNamespaces(want map[string]map[string]string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		rs, ok := s.RootModule().Resources[namespacesAddr]
		if !ok {
			return fmt.Errorf("%s is not in the state", namespacesAddr)
		}
		attrs := rs.Primary.Attributes
		if got := attrs["namespaces.%"]; got != fmt.Sprint(len(want)) {
			var listed []string
			for k := range attrs {
				if name, ok := strings.CutSuffix(strings.TrimPrefix(k, "namespaces."), ".uid"); ok && strings.HasPrefix(k, "namespaces.") {
					listed = append(listed, name)
				}
			}
			return fmt.Errorf("%s namespaces listed (%v), want %d", got, listed, len(want))
		}
		var problems []string
		for ns, fields := range want {
			for field, value := range fields {
				if got := attrs["namespaces."+ns+"."+field]; got != value {
					problems = append(problems, fmt.Sprintf("%s.%s = %q, want %q", ns, field, got, value))
				}
			}
			if attrs["namespaces."+ns+".uid"] == "" || attrs["namespaces."+ns+".created_at"] == "" {
				problems = append(problems, ns+": no uid or created_at")
			}
		}
		if len(problems) > 0 {
			return fmt.Errorf("%s", strings.Join(problems, "\n"))
		}
		return nil
	}
}

func TestAccNamespaces_classifiesByMarkerNameAndGitLabState(t *testing.T) {
	project := namespacesTestProject(t)
	other := gitlab.Project{ID: project.ID, PathSlug: project.PathSlug + "-other"}
	historical := func(slug string) string { return gitlab.DefaultNamespace(project.PathSlug, project.ID, slug) }
	live, stopped, deleted := "review/acc-live", "review/acc-stopped", "review/acc-deleted"
	createNamespaces(t,
		markedNamespace(historical(gitlab.EnvironmentSlug(live)), live, project.PathSlug),
		markedNamespace("acc-ns-custom-"+project.ID, stopped, project.PathSlug),
		markedNamespace(historical(gitlab.EnvironmentSlug(deleted)), deleted, project.PathSlug),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: historical("review-old-stop-abc123")}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: historical("review-old-gone-abc123")}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: historical("review-old-live-abc123")}},
		// Never listed: a look-alike without the project ID, another project's environment.
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: project.PathSlug + "-review-old-gone-abc123"}},
		markedNamespace("acc-ns-other-"+project.ID, stopped, other.PathSlug),
	)
	srv, apiURL := gitlabStandIn(t, project)
	for _, env := range []struct{ name, slug, state string }{
		{live, gitlab.EnvironmentSlug(live), gitlabstate.EnvironmentAvailable},
		{stopped, gitlab.EnvironmentSlug(stopped), gitlabstate.EnvironmentStopped},
		{"review/old-stop", "review-old-stop-abc123", gitlabstate.EnvironmentStopped},
		{"review/old-live", "review-old-live-abc123", gitlabstate.EnvironmentAvailable},
	} {
		if _, err := srv.PutEnvironment(env.name, env.slug, env.state); err != nil {
			t.Fatal(err)
		}
	}
	withoutGitLab := map[string]map[string]string{}
	withGitLab := map[string]map[string]string{
		historical(gitlab.EnvironmentSlug(live)): {"rule": "marked", "owned": "true", "environment_name": live, "gitlab_state": "available", "stale": "false"},
		"acc-ns-custom-" + project.ID:            {"rule": "marked", "owned": "true", "environment_name": stopped, "gitlab_state": "stopped", "stale": "true"},
		historical(gitlab.EnvironmentSlug(deleted)): {"rule": "marked", "owned": "true", "environment_slug": gitlab.EnvironmentSlug(deleted),
			"gitlab_state": "gone", "stale": "true"},
		historical("review-old-stop-abc123"): {"rule": "historical", "owned": "false", "environment_name": "review/old-stop",
			"environment_slug": "review-old-stop-abc123", "gitlab_state": "stopped", "stale": "true", "terminating": "false"},
		historical("review-old-gone-abc123"): {"rule": "historical", "owned": "false", "environment_name": "",
			"environment_slug": "review-old-gone-abc123", "gitlab_state": "gone", "stale": "true"},
		historical("review-old-live-abc123"): {"rule": "historical", "environment_name": "review/old-live", "gitlab_state": "available", "stale": "false"},
	}
	for ns := range withGitLab {
		withoutGitLab[ns] = map[string]string{"gitlab_state": "unknown", "stale": "false"}
	}

	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: namespacesConfig(project, apiURL, testGitLabToken),
				Check: resource.ComposeTestCheckFunc(
					expectNamespaces(withGitLab),
					resource.TestCheckResourceAttr(namespacesAddr, "gitlab_api_url", apiURL),
					resource.TestMatchResourceAttr(namespacesAddr, "namespaces."+historical("review-old-gone-abc123")+".age", regexp.MustCompile(`^\d+s$|^\d+m\d+s$`)),
				),
			},
			{
				// Without GitLab nothing is stale, whatever the namespaces look like.
				Config: namespacesConfig(project, "", ""),
				Check:  expectNamespaces(withoutGitLab),
			},
		},
	})
}

func TestAccNamespaces_gitLabErrorsSayWhatToDo(t *testing.T) {
	testAccCluster(t)
	project := namespacesTestProject(t)
	_, apiURL := gitlabStandIn(t, project)
	wrongProject := gitlab.Project{ID: "1", PathSlug: project.PathSlug}
	testAccResourceTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      namespacesConfig(project, apiURL, "glpat-wrong"),
				ExpectError: regexp.MustCompile(`(?s)Unable to Read GitLab Environments.*project ` + project.ID + `.*rejected the\s+token.*401`),
			},
			{
				Config:      namespacesConfig(wrongProject, apiURL, testGitLabToken),
				ExpectError: regexp.MustCompile(`(?s)Unable to Read GitLab Environments.*no project 1.*project_id.*404`),
			},
			{
				Config:      namespacesConfig(gitlab.Project{}, "", ""),
				ExpectError: regexp.MustCompile(`(?s)Missing GitLab Project.*CI_PROJECT_ID.*CI_PROJECT_PATH_SLUG`),
			},
		},
	})
}

func TestNamespaces_badAttributesFailValidation(t *testing.T) {
	project := gitlab.Project{ID: "4242", PathSlug: "my-group-my-app"}
	tests := []struct {
		desc   string
		config string
		want   string
	}{
		{"project id", namespacesConfig(gitlab.Project{ID: "my-group/my-app", PathSlug: project.PathSlug}, "", ""),
			`(?s)Invalid GitLab Project ID.*project_id.*not a number.*CI_PROJECT_ID`},
		{"project path slug", namespacesConfig(gitlab.Project{ID: project.ID, PathSlug: "my-group/My.App"}, "", ""),
			`(?s)Invalid GitLab Project Path Slug.*CI_PROJECT_PATH_SLUG.*my-group-my-app`},
		{"API URL without scheme", namespacesConfig(project, "gitlab.example.com/api/v4", "t"),
			`(?s)Invalid GitLab API URL.*gitlab_api_url.*absolute\s+http\s+or\s+https\s+URL`},
		{"API URL without /api/v4", namespacesConfig(project, "https://gitlab.example.com", "t"),
			`(?s)Invalid GitLab API URL.*must end with /api/v4`},
		{"token with a newline", namespacesConfig(project, "https://gitlab.example.com/api/v4", "glpat-x\n"),
			`(?s)Invalid GitLab Token.*gitlab_token.*whitespace`},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			testUnitResourceTest(t, resource.TestCase{
				ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
				Steps:                    []resource.TestStep{{Config: tt.config, PlanOnly: true, ExpectError: regexp.MustCompile(tt.want)}},
			})
		})
	}
}

// A project taken from the CI variables is checked as a configured one is: with
// project_id unset, an invalid CI_PROJECT_ID fails the read on project_id.
func TestNamespaces_projectFromCIIsValidated(t *testing.T) {
	d := &namespacesDataSource{data: &providerData{ci: gitlab.CIMetadata{ProjectID: "my-group/my-app", ProjectPathSlug: "my-group-my-app"}}}
	var diags diag.Diagnostics
	config := namespacesModel{ProjectID: types.StringNull(), ProjectPathSlug: types.StringNull()}
	if _, ok := d.project(config, &diags); ok || diags.ErrorsCount() != 1 {
		t.Fatalf("project() = ok %t, diagnostics %v; want one error", ok, diags)
	}
	if err, ok := diags.Errors()[0].(diag.DiagnosticWithPath); !ok || !err.Path().Equal(path.Root("project_id")) || err.Summary() != "Invalid GitLab Project ID" {
		t.Errorf("the error = %v, want Invalid GitLab Project ID on project_id", diags.Errors()[0])
	}
}
