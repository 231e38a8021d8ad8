package gitlabstate

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

const (
	testJobToken = "job-token-123"
	testPAT      = "glpat-456"
	// testDeveloperJobToken is the job token of a user with the Developer role.
	testDeveloperJobToken = "job-token-789"
)

var testNow = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

func newTestServer(t *testing.T) (*Server, *client) {
	t.Helper()
	srv := New(Config{
		ProjectID:   "42",
		ProjectPath: "my-group/my-app",
		Users: []User{
			{Username: "alice", JobToken: testJobToken, PersonalAccessToken: testPAT, Maintainer: true},
			{Username: "dave", JobToken: testDeveloperJobToken},
		},
		Now: func() time.Time { return testNow },
	})
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return srv, &client{t: t, base: ts.URL, user: JobTokenUser, password: testJobToken}
}

// client speaks to the server as Terraform's http backend does.
type client struct {
	t              *testing.T
	base           string
	user, password string
}

// in returns a copy of c that reports to t, for a subtest.
func (c *client) in(t *testing.T) *client {
	copied := *c
	copied.t = t
	return &copied
}

type response struct {
	status int
	body   string
}

func (c *client) do(method, path, body string) response {
	c.t.Helper()
	var reader io.Reader
	if body != "" {
		reader = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, c.base+path, reader)
	if err != nil {
		c.t.Fatal(err)
	}
	if c.user != "" {
		req.SetBasicAuth(c.user, c.password)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return response{status: resp.StatusCode, body: string(data)}
}

func (c *client) expect(method, path, body string, status int) response {
	c.t.Helper()
	resp := c.do(method, path, body)
	if resp.status != status {
		c.t.Fatalf("%s %s: status %d, want %d (body %q)", method, path, resp.status, status, resp.body)
	}
	return resp
}

func lockBody(id string) string {
	data, _ := json.Marshal(LockInfo{ID: id, Operation: "OperationTypeApply", Who: "runner@host", Version: "1.11.4", Path: "", Created: testNow})
	return string(data)
}

const statePath = "/api/v4/projects/42/terraform/state/review-x"
