package reportcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlabstate"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/planreport"
)

const (
	botToken      = "glpat-bot-secret"
	reviewerToken = "glpat-reviewer-secret"
	jobToken      = "job-token-secret"
	mergeRequest  = 12
)

// planJSON is a saved plan's JSON in which the release's ConfigMap says message.
func planJSON(t *testing.T, message string) string {
	t.Helper()
	manifests := func(m string) map[string]string {
		return map[string]string{"ConfigMap/app-content": "apiVersion: v1\ndata:\n  message: " + m + "\nkind: ConfigMap\n"}
	}
	doc, err := json.Marshal(map[string]any{"format_version": "1.2", "resource_changes": []any{map[string]any{
		"address": "gitlabk8s_release.app", "mode": "managed", "type": "gitlabk8s_release", "name": "app",
		"change": map[string]any{"actions": []string{"update"},
			"before": map[string]any{"manifests": manifests("before")}, "after": map[string]any{"manifests": manifests(message)}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	return string(doc)
}

type pipeline struct {
	t      *testing.T
	api    string
	dir    string
	token  string
	env    string
	stdout bytes.Buffer
	stderr bytes.Buffer
}

func (p *pipeline) getenv(name string) string {
	return map[string]string{
		"CI_API_V4_URL": p.api, "CI_PROJECT_ID": "99", "CI_MERGE_REQUEST_IID": "12", "CI_PROJECT_DIR": p.dir,
		"CI_JOB_URL": "https://gitlab.example.com/g/p/-/jobs/5", "CI_COMMIT_SHORT_SHA": "abc1234",
		"CI_ENVIRONMENT_NAME": p.env, TokenVariable: p.token,
	}[name]
}

// run runs the report of plan and returns the report file's text.
func (p *pipeline) run(plan string) string {
	p.t.Helper()
	p.stdout.Reset()
	p.stderr.Reset()
	out := filepath.Join(p.dir, DefaultOut)
	code := Run(context.Background(), []string{"-out", out}, p.getenv, IO{Stdin: strings.NewReader(plan), Stdout: &p.stdout, Stderr: &p.stderr})
	if code != 0 {
		p.t.Fatalf("report exited %d:\n%s%s", code, p.stdout.String(), p.stderr.String())
	}
	for _, secret := range []string{botToken, reviewerToken, jobToken} {
		if strings.Contains(p.stdout.String()+p.stderr.String(), secret) {
			p.t.Fatalf("report printed a token:\n%s%s", p.stdout.String(), p.stderr.String())
		}
	}
	text, err := os.ReadFile(out)
	if err != nil {
		p.t.Fatal(err)
	}
	return string(text)
}

func standIn(t *testing.T) (*gitlabstate.Server, *pipeline) {
	srv := gitlabstate.New(gitlabstate.Config{ProjectID: "99", Users: []gitlabstate.User{
		{Username: "project_99_bot", PersonalAccessToken: botToken, NotesAccess: true},
		{Username: "reviewer", PersonalAccessToken: reviewerToken, NotesAccess: true},
		{Username: "ci", JobToken: jobToken, PersonalAccessToken: jobToken},
	}})
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return srv, &pipeline{t: t, api: hs.URL + "/api/v4", dir: t.TempDir(), token: botToken, env: "review/feature"}
}

func TestRun_createsTheNoteThenUpdatesIt(t *testing.T) {
	srv, p := standIn(t)
	// A reviewer quotes the report: the marker is in a note that is not the bot's.
	quoted := srv.AddMergeRequestNote(mergeRequest, "reviewer", planreport.Marker("review/feature")+"\nquoting the plan")

	first := p.run(planJSON(t, "first"))
	if !strings.Contains(first, "+  message: first") {
		t.Fatalf("the report file lacks the changed line:\n%s", first)
	}
	notes := srv.MergeRequestNotes(mergeRequest)
	if len(notes) != 2 || notes[1].Author.Username != "project_99_bot" || notes[1].Body != first {
		t.Fatalf("after the first pipeline the notes are %+v, want the reviewer's and the bot's report", notes)
	}
	posted := notes[1].ID

	second := p.run(planJSON(t, "second"))
	notes = srv.MergeRequestNotes(mergeRequest)
	if len(notes) != 2 || notes[1].ID != posted || notes[1].Body != second || !strings.Contains(second, "+  message: second") {
		t.Fatalf("after the second pipeline the notes are %+v, want note %d updated to the second report", notes, posted)
	}
	if notes[0] != quoted {
		t.Errorf("the reviewer's note changed: %+v, was %+v", notes[0], quoted)
	}
	if !strings.Contains(p.stdout.String(), "Updated note") {
		t.Errorf("the second run does not say it updated the note:\n%s", p.stdout.String())
	}

	// Another environment of the same merge request gets its own note.
	p.env = "review/feature-db"
	p.run(planJSON(t, "db"))
	if notes := srv.MergeRequestNotes(mergeRequest); len(notes) != 3 {
		t.Errorf("another environment's report did not add its own note: %+v", notes)
	}
}

func TestRun_noteIsWarningWhenTheTokenMayNotWrite(t *testing.T) {
	srv, p := standIn(t)
	p.token = jobToken
	report := p.run(planJSON(t, "first"))
	if !strings.Contains(report, "+  message: first") {
		t.Errorf("the report file lacks the changed line:\n%s", report)
	}
	if !strings.Contains(p.stderr.String(), "Reporter role and the api scope") {
		t.Errorf("the warning does not say what the token needs:\n%s", p.stderr.String())
	}
	if notes := srv.MergeRequestNotes(mergeRequest); len(notes) != 0 {
		t.Errorf("a note was posted: %+v", notes)
	}

	p.token = ""
	p.run(planJSON(t, "first"))
	if !strings.Contains(p.stdout.String(), "MR_NOTE_TOKEN is not set") {
		t.Errorf("without a token the run does not say the report is the artifact only:\n%s", p.stdout.String())
	}
}

func TestRun_cutNoteLinksToTheArtifact(t *testing.T) {
	_, p := standIn(t)
	if got, want := artifactURL(p.getenv, filepath.Join(p.dir, "sub", DefaultOut)), "https://gitlab.example.com/g/p/-/jobs/5/artifacts/file/sub/"+DefaultOut; got != want {
		t.Errorf("artifactURL = %q, want %q", got, want)
	}
	if got := artifactURL(p.getenv, "/elsewhere/"+DefaultOut); got != "" {
		t.Errorf("artifactURL of a file outside the project = %q, want none", got)
	}
}
