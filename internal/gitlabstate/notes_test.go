package gitlabstate

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func notesServer(t *testing.T) (*Server, *httptest.Server) {
	t.Helper()
	srv := New(Config{ProjectID: "7", Users: []User{
		{Username: "plan-bot", JobToken: "job-a", PersonalAccessToken: "pat-bot", NotesAccess: true},
		{Username: "guest", PersonalAccessToken: "pat-guest"},
		{Username: "reviewer", PersonalAccessToken: "pat-reviewer", NotesAccess: true},
	}})
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return srv, hs
}

func call(t *testing.T, hs *httptest.Server, method, path, header, token, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, hs.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(header, token)
	resp, err := hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var answer map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&answer)
	return resp.StatusCode, answer
}

func TestNotes_createThenUpdateByItsAuthorOnly(t *testing.T) {
	srv, hs := notesServer(t)
	const notes = "/api/v4/projects/7/merge_requests/3/notes"

	status, created := call(t, hs, http.MethodPost, notes, "PRIVATE-TOKEN", "pat-bot", `{"body": "first"}`)
	if status != http.StatusCreated || created["body"] != "first" {
		t.Fatalf("POST note = %d %v, want 201 with the body", status, created)
	}
	path := notes + "/" + jsonNumber(created["id"])
	if status, _ := call(t, hs, http.MethodPut, path, "PRIVATE-TOKEN", "pat-reviewer", `{"body": "hijacked"}`); status != http.StatusForbidden {
		t.Errorf("PUT of another user's note = %d, want 403", status)
	}
	if status, updated := call(t, hs, http.MethodPut, path, "PRIVATE-TOKEN", "pat-bot", `{"body": "second"}`); status != http.StatusOK || updated["body"] != "second" {
		t.Errorf("PUT of its own note = %d %v, want 200 with the new body", status, updated)
	}
	got := srv.MergeRequestNotes(3)
	if len(got) != 1 || got[0].Body != "second" || got[0].Author.Username != "plan-bot" {
		t.Errorf("merge request 3 has notes %+v, want plan-bot's one, updated", got)
	}
}

func TestNotes_tokenChecks(t *testing.T) {
	_, hs := notesServer(t)
	const notes = "/api/v4/projects/7/merge_requests/3/notes"
	for _, tt := range []struct {
		desc, method, path, header, token, body string
		want                                    int
	}{
		{"job token lists", http.MethodGet, notes, "JOB-TOKEN", "job-a", "", http.StatusForbidden},
		{"job token posts", http.MethodPost, notes, "JOB-TOKEN", "job-a", `{"body": "x"}`, http.StatusForbidden},
		{"job token reads /user", http.MethodGet, "/api/v4/user", "JOB-TOKEN", "job-a", "", http.StatusForbidden},
		{"user without the role posts", http.MethodPost, notes, "PRIVATE-TOKEN", "pat-guest", `{"body": "x"}`, http.StatusForbidden},
		{"unknown token", http.MethodPost, notes, "PRIVATE-TOKEN", "nope", `{"body": "x"}`, http.StatusUnauthorized},
		{"another project", http.MethodPost, "/api/v4/projects/8/merge_requests/3/notes", "PRIVATE-TOKEN", "pat-bot", `{"body": "x"}`, http.StatusNotFound},
		{"empty body", http.MethodPost, notes, "PRIVATE-TOKEN", "pat-bot", `{"body": ""}`, http.StatusBadRequest},
		{"too long", http.MethodPost, notes, "PRIVATE-TOKEN", "pat-bot", `{"body": "` + strings.Repeat("é", NoteSizeLimit+1) + `"}`, http.StatusBadRequest},
		{"at the limit", http.MethodPost, notes, "PRIVATE-TOKEN", "pat-bot", `{"body": "` + strings.Repeat("é", NoteSizeLimit) + `"}`, http.StatusCreated},
		{"bearer lists", http.MethodGet, notes, "Authorization", "Bearer pat-bot", "", http.StatusOK},
		{"access token reads /user", http.MethodGet, "/api/v4/user", "PRIVATE-TOKEN", "pat-reviewer", "", http.StatusOK},
	} {
		if status, answer := call(t, hs, tt.method, tt.path, tt.header, tt.token, tt.body); status != tt.want {
			t.Errorf("%s: %s %s = %d %v, want %d", tt.desc, tt.method, tt.path, status, answer, tt.want)
		}
	}
}

func jsonNumber(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
