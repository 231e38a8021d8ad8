package gitlabstate

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

func TestServer_lockedStateLifecycle(t *testing.T) {
	srv, c := newTestServer(t)

	c.expect("GET", statePath, "", http.StatusNotFound)

	resp := c.expect("POST", statePath+"/lock", lockBody("lock-1"), http.StatusOK)
	var held LockInfo
	if err := json.Unmarshal([]byte(resp.body), &held); err != nil {
		t.Fatalf("lock answer %q: %v", resp.body, err)
	}
	if held.ID != "lock-1" || held.Who != "alice" || !held.Created.Equal(testNow) {
		t.Errorf("lock answer = %+v, want ID lock-1, Who alice (the GitLab user), Created %v", held, testNow)
	}
	// Locking creates the state without a version, which GitLab answers with 204.
	c.expect("GET", statePath, "", http.StatusNoContent)

	c.expect("POST", statePath, `{"serial":1}`, http.StatusConflict)
	c.expect("POST", statePath+"?ID=lock-2", `{"serial":1}`, http.StatusConflict)
	c.expect("POST", statePath+"?ID=lock-1", `{"serial":1}`, http.StatusOK)
	if got := c.expect("GET", statePath, "", http.StatusOK).body; got != `{"serial":1}` {
		t.Errorf("GET after POST = %q, want the posted state", got)
	}

	// A second operation meets the first one's lock, and learns its ID.
	resp = c.expect("POST", statePath+"/lock", lockBody("lock-2"), http.StatusConflict)
	var conflict LockInfo
	if err := json.Unmarshal([]byte(resp.body), &conflict); err != nil {
		t.Fatalf("conflict answer %q: %v", resp.body, err)
	}
	if conflict.ID != "lock-1" || conflict.Who != "alice" {
		t.Errorf("conflict answer = %+v, want the held lock lock-1 of alice", conflict)
	}

	c.expect("DELETE", statePath+"/lock", lockBody("lock-2"), http.StatusConflict)
	c.expect("DELETE", statePath, "", http.StatusConflict)
	c.expect("DELETE", statePath+"/lock", lockBody("lock-1"), http.StatusOK)
	if st, _ := srv.State("review-x"); st.Lock != nil {
		t.Errorf("lock after unlock = %+v, want none", st.Lock)
	}

	// Unlocked: a write must not claim a lock, and one without an ID succeeds.
	c.expect("POST", statePath+"?ID=lock-1", `{"serial":2}`, http.StatusConflict)
	c.expect("POST", statePath, `{"serial":2}`, http.StatusOK)
	st, ok := srv.State("review-x")
	if !ok || len(st.Versions) != 2 || string(st.Latest()) != `{"serial":2}` {
		t.Errorf("State = %+v, %v; want two versions ending in serial 2", st, ok)
	}

	c.expect("DELETE", statePath, "", http.StatusOK)
	c.expect("GET", statePath, "", http.StatusNotFound)
	if names := srv.Names(); len(names) != 0 {
		t.Errorf("Names after DELETE = %v, want none", names)
	}
}

// Deleting a state takes the Maintainer role, as in GitLab; the REST API's
// PRIVATE-TOKEN header authenticates as well as basic auth.
func TestServer_deleteNeedsMaintainer(t *testing.T) {
	srv, c := newTestServer(t)
	c.expect("POST", statePath, `{"serial":1}`, http.StatusOK)
	developer := &client{t: t, base: c.base, user: JobTokenUser, password: testDeveloperJobToken}
	developer.expect("GET", statePath, "", http.StatusOK)
	developer.expect("DELETE", statePath, "", http.StatusForbidden)
	if _, ok := srv.State("review-x"); !ok {
		t.Fatal("a developer's DELETE removed the state")
	}

	req, err := http.NewRequest(http.MethodDelete, c.base+statePath, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("PRIVATE-TOKEN", testPAT)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE with the maintainer's PRIVATE-TOKEN: status %d, want 200", resp.StatusCode)
	}
	if names := srv.Names(); len(names) != 0 {
		t.Errorf("Names after DELETE = %v, want none", names)
	}
}

func TestServer_unlockWithoutIDReleasesAnyLock(t *testing.T) {
	srv, c := newTestServer(t)
	c.expect("DELETE", statePath+"/lock", "", http.StatusNotFound)
	c.expect("POST", statePath+"/lock", lockBody("killed-job"), http.StatusOK)

	c.expect("DELETE", statePath+"/lock", "", http.StatusOK)
	if st, _ := srv.State("review-x"); st.Lock != nil {
		t.Errorf("lock after unlock without ID = %+v, want none", st.Lock)
	}
	// The lock ID may also come in the query, as GitLab's API accepts it.
	c.expect("POST", statePath+"/lock", lockBody("next"), http.StatusOK)
	c.expect("DELETE", statePath+"/lock?ID=other", "", http.StatusConflict)
	c.expect("DELETE", statePath+"/lock?ID=next", "", http.StatusOK)
}

func TestServer_ForceUnlock(t *testing.T) {
	srv, c := newTestServer(t)
	if _, err := srv.ForceUnlock("review-x"); err == nil {
		t.Error("ForceUnlock of a missing state succeeded")
	}
	c.expect("POST", statePath+"/lock", lockBody("killed-job"), http.StatusOK)
	released, err := srv.ForceUnlock("review-x")
	if err != nil || released.ID != "killed-job" {
		t.Fatalf("ForceUnlock = %+v, %v; want the lock killed-job", released, err)
	}
	if _, err := srv.ForceUnlock("review-x"); err == nil {
		t.Error("ForceUnlock of an unlocked state succeeded")
	}
	c.expect("POST", statePath+"/lock", lockBody("next"), http.StatusOK)
}

func TestServer_authentication(t *testing.T) {
	_, c := newTestServer(t)
	for _, tc := range []struct {
		name, user, password string
		status               int
	}{
		{"no credentials", "", "", http.StatusUnauthorized},
		{"wrong job token", JobTokenUser, "nope", http.StatusUnauthorized},
		{"personal access token as job token", JobTokenUser, testPAT, http.StatusUnauthorized},
		{"job token under another user name", "alice", testJobToken, http.StatusUnauthorized},
		{"empty password", JobTokenUser, "", http.StatusUnauthorized},
		{"job token", JobTokenUser, testJobToken, http.StatusNotFound},
		{"personal access token", "anyone", testPAT, http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := c.in(t)
			c.user, c.password = tc.user, tc.password
			c.expect("GET", statePath, "", tc.status)
		})
	}
}

func TestServer_routes(t *testing.T) {
	_, c := newTestServer(t)
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
	}{
		{"another project", "GET", "/api/v4/projects/7/terraform/state/review-x", "", http.StatusNotFound},
		{"project by encoded path", "POST", "/api/v4/projects/my-group%2Fmy-app/terraform/state/by-path", `{}`, http.StatusOK},
		{"name with an encoded slash", "GET", "/api/v4/projects/42/terraform/state/a%2Fb", "", http.StatusNotFound},
		{"empty body is no content", "POST", statePath, "", http.StatusNoContent},
		{"lock without an ID", "POST", statePath + "/lock", `{"Operation":"OperationTypePlan"}`, http.StatusBadRequest},
		{"lock with a body that is not JSON", "POST", statePath + "/lock", `lock`, http.StatusBadRequest},
		{"unsupported method", "PUT", statePath, `{}`, http.StatusMethodNotAllowed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.in(t).expect(tc.method, tc.path, tc.body, tc.status)
		})
	}
	if got := c.expect("GET", "/api/v4/projects/42/terraform/state/by-path", "", http.StatusOK).body; got != `{}` {
		t.Errorf("state stored through the project path = %q, want {}", got)
	}
}

func TestServer_errorsAreGitLabMessages(t *testing.T) {
	_, c := newTestServer(t)
	resp := c.expect("GET", statePath, "", http.StatusNotFound)
	var msg struct{ Message string }
	if err := json.Unmarshal([]byte(resp.body), &msg); err != nil || msg.Message == "" {
		t.Errorf("404 body = %q, want {\"message\": ...}", resp.body)
	}
}

func TestServer_concurrentLocksHaveOneWinner(t *testing.T) {
	srv, c := newTestServer(t)
	const contenders = 16
	statuses := make([]int, contenders)
	var wg sync.WaitGroup
	for i := range contenders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = c.do("POST", statePath+"/lock", lockBody(fmt.Sprintf("lock-%d", i))).status
		}()
	}
	wg.Wait()
	won := 0
	for i, status := range statuses {
		switch status {
		case http.StatusOK:
			won++
		case http.StatusConflict:
		default:
			t.Errorf("contender %d: status %d, want 200 or 409", i, status)
		}
	}
	if won != 1 {
		t.Errorf("%d contenders took the lock, want exactly 1 (statuses %v)", won, statuses)
	}
	if st, _ := srv.State("review-x"); st.Lock == nil {
		t.Error("no lock held after the contest")
	}
}

func TestServer_logsRequestsWithoutCredentials(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	srv := New(Config{
		ProjectID: "42",
		Users:     []User{{Username: "alice", JobToken: testJobToken}},
		Logf: func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			lines = append(lines, fmt.Sprintf(format, args...))
		},
	})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	c := &client{t: t, base: ts.URL, user: JobTokenUser, password: testJobToken}
	c.expect("POST", statePath+"/lock", lockBody("l"), http.StatusOK)
	c.password = "wrong"
	c.expect("GET", statePath, "", http.StatusUnauthorized)

	mu.Lock()
	defer mu.Unlock()
	want := []string{"POST " + statePath + "/lock -> 200", "GET " + statePath + " -> 401"}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("log lines = %q, want %q", lines, want)
	}
	for _, line := range lines {
		if strings.Contains(line, testJobToken) || strings.Contains(line, "wrong") {
			t.Errorf("log line %q carries a credential", line)
		}
	}
}
