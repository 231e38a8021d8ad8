package gitlabapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlab"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlabstate"
)

const (
	jobToken    = "job-token-secret"
	accessToken = "glpat-secret"
)

// standIn serves GitLab's environments API with n environments, every third stopped.
func standIn(t *testing.T, n int) (*gitlabstate.Server, *httptest.Server) {
	t.Helper()
	srv := gitlabstate.New(gitlabstate.Config{ProjectID: "4242", ProjectPath: "my-group/my-app",
		Users: []gitlabstate.User{{Username: "janitor", JobToken: jobToken, PersonalAccessToken: accessToken}}})
	for i := range n {
		name := fmt.Sprintf("review/branch-%03d", i)
		state := gitlabstate.EnvironmentAvailable
		if i%3 == 0 {
			state = gitlabstate.EnvironmentStopped
		}
		if _, err := srv.PutEnvironment(name, gitlab.EnvironmentSlug(name), state); err != nil {
			t.Fatal(err)
		}
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return srv, hs
}

func TestListEnvironments_followsEveryPage(t *testing.T) {
	_, hs := standIn(t, 250)
	for _, tt := range []struct {
		desc  string
		token string
		kind  TokenKind
	}{
		{"job token", jobToken, JobToken},
		{"access token", accessToken, AccessToken},
	} {
		t.Run(tt.desc, func(t *testing.T) {
			c, err := New(hs.URL+"/api/v4", tt.token, tt.kind, nil, "test")
			if err != nil {
				t.Fatal(err)
			}
			for _, project := range []string{"4242", "my-group/my-app"} {
				envs, err := c.ListEnvironments(context.Background(), project)
				if err != nil {
					t.Fatal(err)
				}
				if len(envs) != 250 {
					t.Fatalf("project %s: %d environments, want 250 (three pages of 100)", project, len(envs))
				}
				seen := map[string]bool{}
				stopped := 0
				for _, e := range envs {
					seen[e.Name] = true
					if e.Slug != gitlab.EnvironmentSlug(e.Name) || e.ID == 0 {
						t.Errorf("environment %+v: slug or ID not read", e)
					}
					if e.State == gitlab.StateStopped {
						stopped++
					}
				}
				if len(seen) != 250 || stopped != 84 {
					t.Errorf("%d distinct names, %d stopped; want 250 and 84", len(seen), stopped)
				}
			}
		})
	}
}

func TestListEnvironments_emptyIsAnAnswer(t *testing.T) {
	_, hs := standIn(t, 0)
	c, _ := New(hs.URL+"/api/v4/", jobToken, JobToken, nil, "")
	envs, err := c.ListEnvironments(context.Background(), "4242")
	if err != nil || envs == nil || len(envs) != 0 {
		t.Errorf("ListEnvironments = %v, %v; want an empty, non-nil list", envs, err)
	}
}

func TestListEnvironments_errorsAreTypedAndHoldNoToken(t *testing.T) {
	_, hs := standIn(t, 3)
	tests := []struct {
		desc, token, project string
		kind                 TokenKind
		status               int
	}{
		{"wrong token", "wrong-" + jobToken, "4242", JobToken, http.StatusUnauthorized},
		{"access token sent as a job token", accessToken, "4242", JobToken, http.StatusUnauthorized},
		{"other project", jobToken, "4243", JobToken, http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			c, _ := New(hs.URL+"/api/v4", tt.token, tt.kind, nil, "")
			_, err := c.ListEnvironments(context.Background(), tt.project)
			var se *StatusError
			if !errors.As(err, &se) || se.StatusCode != tt.status {
				t.Fatalf("err = %v, want a StatusError %d", err, tt.status)
			}
			if strings.Contains(err.Error(), tt.token) {
				t.Errorf("the error shows the token: %v", err)
			}
		})
	}
}

// pager answers pages the way a test needs: headers chosen per page.
func pager(t *testing.T, pages int, headers func(page int, self string) http.Header) *httptest.Server {
	t.Helper()
	var hs *httptest.Server
	hs = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("PRIVATE-TOKEN") != accessToken {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"message":"401 Unauthorized"}`))
			return
		}
		page := 1
		_, _ = fmt.Sscan(r.URL.Query().Get("page"), &page)
		for k, v := range headers(page, hs.URL) {
			w.Header()[k] = v
		}
		if page > pages {
			_, _ = w.Write([]byte(`[]`))
			return
		}
		fmt.Fprintf(w, `[{"id":%d,"name":"env-%d","slug":"env-%d","state":"stopped"}]`, page, page, page)
	}))
	t.Cleanup(hs.Close)
	return hs
}

func TestListEnvironments_paginationHeaders(t *testing.T) {
	var foreignHits atomic.Int32
	foreign := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		foreignHits.Add(1)
		_, _ = w.Write([]byte(`[]`))
	}))
	t.Cleanup(foreign.Close)
	tests := []struct {
		desc    string
		headers func(page int, self string) http.Header
		want    int
	}{
		{"X-Next-Page only (GitLab omits Link for large lists)", func(page int, _ string) http.Header {
			if page < 4 {
				return http.Header{"X-Next-Page": {fmt.Sprint(page + 1)}}
			}
			return http.Header{"X-Next-Page": {""}}
		}, 4},
		{"Link only", func(page int, self string) http.Header {
			if page < 3 {
				return http.Header{"Link": {fmt.Sprintf(`<%s/api/v4/projects/1/environments?page=%d&per_page=100>; rel="next", <%s/x>; rel="first"`, self, page+1, self)}}
			}
			return http.Header{}
		}, 3},
		{"a Link to another server is not followed", func(page int, _ string) http.Header {
			h := http.Header{"Link": {fmt.Sprintf(`<%s/steal?page=%d>; rel="next"`, foreign.URL, page+1)}}
			if page < 2 {
				h.Set("X-Next-Page", fmt.Sprint(page+1))
			}
			return h
		}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			hs := pager(t, 10, tt.headers)
			c, _ := New(hs.URL+"/api/v4", accessToken, AccessToken, nil, "")
			envs, err := c.ListEnvironments(context.Background(), "1")
			if err != nil || len(envs) != tt.want {
				t.Errorf("ListEnvironments = %d environments, %v; want %d", len(envs), err, tt.want)
			}
		})
	}
	if foreignHits.Load() != 0 {
		t.Errorf("the token was sent to another server %d times", foreignHits.Load())
	}

	loop := pager(t, 10, func(int, string) http.Header { return http.Header{"X-Next-Page": {"2"}} })
	c, _ := New(loop.URL+"/api/v4", accessToken, AccessToken, nil, "")
	if _, err := c.ListEnvironments(context.Background(), "1"); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("a server announcing the same page forever: err = %v, want an error", err)
	}
}

func TestParseBaseURL_saysWhatAURLShouldLookLike(t *testing.T) {
	for _, good := range []string{"https://gitlab.example.com/api/v4", "http://127.0.0.1:8080/gitlab/api/v4/"} {
		if _, err := ParseBaseURL(good); err != nil {
			t.Errorf("ParseBaseURL(%q) = %v", good, err)
		}
	}
	for _, bad := range []string{"gitlab.example.com/api/v4", "ftp://gitlab.example.com/api/v4", "https://gitlab.example.com",
		"https://gitlab.example.com/api/v4?private_token=x", "https://user:pw@gitlab.example.com/api/v4", "https://"} {
		if _, err := ParseBaseURL(bad); err == nil {
			t.Errorf("ParseBaseURL(%q) = nil, want an error", bad)
		}
	}
}
