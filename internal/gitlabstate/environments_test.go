package gitlabstate

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func newEnvironmentsServer(t *testing.T, n int) (*Server, string) {
	t.Helper()
	srv, c := newTestServer(t)
	for i := 1; i <= n; i++ {
		state := EnvironmentAvailable
		if i%2 == 0 {
			state = EnvironmentStopped
		}
		if _, err := srv.PutEnvironment(fmt.Sprintf("review/b%d", i), fmt.Sprintf("review-b%d", i), state); err != nil {
			t.Fatal(err)
		}
	}
	return srv, c.base
}

func getEnvironments(t *testing.T, base, query string, header http.Header) (*http.Response, []Environment) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/api/v4/projects/42/environments"+query, nil)
	req.Header = header
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var envs []Environment
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&envs); err != nil {
			t.Fatal(err)
		}
	}
	return resp, envs
}

func TestEnvironments_paginatesAsGitLab(t *testing.T) {
	_, base := newEnvironmentsServer(t, 45)
	auth := http.Header{"Private-Token": {testPAT}}
	resp, envs := getEnvironments(t, base, "", auth)
	if len(envs) != defaultPerPage || resp.Header.Get("X-Total") != "45" || resp.Header.Get("X-Total-Pages") != "3" ||
		resp.Header.Get("X-Next-Page") != "2" || resp.Header.Get("X-Prev-Page") != "" || resp.Header.Get("X-Page") != "1" {
		t.Errorf("first page: %d environments, headers %v", len(envs), resp.Header)
	}
	if !strings.Contains(resp.Header.Get("Link"), `page=2&per_page=20>; rel="next"`) {
		t.Errorf("Link = %q, want a rel=next to page 2", resp.Header.Get("Link"))
	}
	resp, envs = getEnvironments(t, base, "?page=3", auth)
	if len(envs) != 5 || envs[0].Name != "review/b41" || resp.Header.Get("X-Next-Page") != "" || strings.Contains(resp.Header.Get("Link"), `rel="next"`) {
		t.Errorf("last page: %v, headers %v", envs, resp.Header)
	}
	if _, envs = getEnvironments(t, base, "?per_page=1000", auth); len(envs) != 45 {
		t.Errorf("per_page above 100: %d environments, want all 45 (the limit is 100)", len(envs))
	}
	if _, envs = getEnvironments(t, base, "?states=stopped&per_page=100", auth); len(envs) != 22 {
		t.Errorf("states=stopped: %d environments, want 22", len(envs))
	}
	if _, envs = getEnvironments(t, base, "?name=review/b7", auth); len(envs) != 1 || envs[0].Slug != "review-b7" {
		t.Errorf("name=review/b7: %v", envs)
	}
}

func TestEnvironments_refusesWhatGitLabRefuses(t *testing.T) {
	srv, base := newEnvironmentsServer(t, 1)
	tests := []struct {
		desc   string
		query  string
		header http.Header
		want   int
	}{
		{"job token header", "", http.Header{"Job-Token": {testJobToken}}, http.StatusOK},
		{"bearer token", "", http.Header{"Authorization": {"Bearer " + testPAT}}, http.StatusOK},
		{"job token as a private token", "", http.Header{"Private-Token": {testJobToken}}, http.StatusUnauthorized},
		{"no credentials", "", http.Header{}, http.StatusUnauthorized},
		{"unknown state", "?states=deleted", http.Header{"Private-Token": {testPAT}}, http.StatusBadRequest},
		{"name and search", "?name=a&search=abc", http.Header{"Private-Token": {testPAT}}, http.StatusBadRequest},
		{"short search", "?search=ab", http.Header{"Private-Token": {testPAT}}, http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if resp, _ := getEnvironments(t, base, tt.query, tt.header); resp.StatusCode != tt.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.want)
			}
		})
	}
	other := httptest.NewServer(srv)
	defer other.Close()
	req, _ := http.NewRequest(http.MethodGet, other.URL+"/api/v4/projects/43/environments", nil)
	req.Header.Set("Private-Token", testPAT)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("another project: %v %v, want 404", resp, err)
	}
	if _, err := srv.PutEnvironment("review/b1", "review-b1", "gone"); err == nil {
		t.Error("PutEnvironment accepted the state gone, which GitLab never reports")
	}
	if !srv.DeleteEnvironment("review/b1") || len(srv.Environments()) != 0 {
		t.Error("DeleteEnvironment did not remove the environment")
	}
}
