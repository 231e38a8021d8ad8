package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	osexec "os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlabstate"
)

// emptyState is a state the stop job's destroy leaves: no resources.
const emptyState = `{"version":4,"serial":9,"lineage":"l","resources":[]}`

// stateWithResources still holds the environment's namespace.
const stateWithResources = `{"version":4,"serial":3,"lineage":"l","resources":[{"mode":"data","type":"gitlabk8s_namespaces","name":"x","instances":[]},{"mode":"managed","type":"gitlabk8s_environment","name":"this","instances":[{}]}]}`

// stateCast is the scenario of the state janitor: every state, what GitLab says of its
// environment, and whether the janitor must delete it.
type stateCast struct {
	name        string
	environment string // "" for a deleted environment
	envState    string
	body        string
	age         time.Duration
	locked      bool
	deleted     bool
}

func janitorStateCast() []stateCast {
	old := 48 * time.Hour
	cast := []stateCast{
		{name: "review-stopped", environment: "review/stopped", envState: gitlabstate.EnvironmentStopped, body: emptyState, age: old, deleted: true},
		{name: "review-gone", body: emptyState, age: old, deleted: true},
		{name: "review-live", environment: "review/live", envState: gitlabstate.EnvironmentAvailable, body: emptyState, age: old},
		{name: "review-stopping", environment: "review/stopping", envState: gitlabstate.EnvironmentStopping, body: emptyState, age: old},
		{name: "review-not-destroyed", environment: "review/not-destroyed", envState: gitlabstate.EnvironmentStopped, body: stateWithResources, age: old},
		{name: "review-locked", environment: "review/locked", envState: gitlabstate.EnvironmentStopped, body: emptyState, age: old, locked: true},
		{name: "review-recent", body: emptyState, age: time.Hour},
		{name: "production", body: emptyState, age: old},
		{name: "reviewer-tools", body: emptyState, age: old},
	}
	// Enough deleted ones that the states come in two GraphQL pages.
	for i := range 110 {
		cast = append(cast, stateCast{name: fmt.Sprintf("review-merged-%03d", i), environment: fmt.Sprintf("review/merged-%03d", i), envState: gitlabstate.EnvironmentStopped, body: emptyState, age: old, deleted: true})
	}
	return cast
}

// The scheduled janitor deletes exactly the states of stopped and deleted review environments
// that are empty, old enough and unlocked, with the protected Maintainer token, and fails naming
// the stale lock and the state that still holds resources. Review pipelines' job tokens
// (Developer) are not enough, and no token shows in the log.
func TestPipeline_janitorDeletesStatesOfStoppedEnvironments(t *testing.T) {
	for _, tool := range []string{"curl", "jq"} {
		if _, err := osexec.LookPath(tool); err != nil {
			t.Fatalf("the janitor's job needs %s: %v", tool, err)
		}
	}
	jobToken, janitorToken := randomHex(16), "glpat-"+randomHex(16)
	gitlab := gitlabstate.New(gitlabstate.Config{ProjectID: "77", ProjectPath: "gitlabk8s/states",
		Users: []gitlabstate.User{
			{Username: "developer", JobToken: jobToken},
			{Username: "project_77_bot", PersonalAccessToken: janitorToken, Maintainer: true},
		}})
	server := httptest.NewServer(gitlab)
	t.Cleanup(server.Close)
	project := Project{ID: "77", Path: "gitlabk8s/states", ServerURL: "https://gitlab.example.com",
		APIURL: server.URL + "/api/v4", JobToken: jobToken, DefaultBranch: "main"}
	cast := janitorStateCast()
	for _, c := range cast {
		putState(t, server.URL, gitlab, janitorToken, c)
	}
	// More environments than one page of the environments API.
	for i := range 130 {
		if _, err := gitlab.PutEnvironment(fmt.Sprintf("review/other-%03d", i), fmt.Sprintf("review-other-%03d", i), gitlabstate.EnvironmentAvailable); err != nil {
			t.Fatal(err)
		}
	}

	res := runStateJanitor(t, project, janitorToken, nil)
	if res.Err == nil {
		t.Errorf("delete_stale_states succeeded with a stale lock and a state holding resources; want it to fail so someone looks")
	}
	deleted := 0
	for _, c := range cast {
		_, exists := gitlab.State(c.name)
		switch {
		case c.deleted && exists:
			t.Errorf("state %s (environment %q %s) was not deleted", c.name, c.environment, c.envState)
		case !c.deleted && !exists:
			t.Errorf("state %s (environment %q %s, locked %v, age %s) was deleted", c.name, c.environment, c.envState, c.locked, c.age)
		case c.deleted:
			deleted++
		}
	}
	for _, want := range []string{
		fmt.Sprintf("Deleted %d Terraform states.", deleted),
		"Deleted the Terraform state review-gone: environment review/gone is stopped or gone.",
		"Stale lock: review-locked has been locked by project_77_bot for 48 hours.",
		"Kept review-not-destroyed: environment review/not-destroyed is stopped or gone, but the state still holds 1 resources.",
		"Kept review-locked: environment review/locked is stopped or gone, but the state is locked.",
	} {
		if !strings.Contains(res.Log, want) {
			t.Errorf("the job log lacks %q", want)
		}
	}
	if strings.Contains(res.Log, janitorToken) || strings.Contains(res.Log, jobToken) {
		t.Error("the job log shows a token")
	}

	// The next night: what needed a person is still reported, nothing else is deleted.
	again := runStateJanitor(t, project, janitorToken, nil)
	if !strings.Contains(again.Log, "Deleted 0 Terraform states.") {
		t.Errorf("a second run deleted states:\n%s", again.Log)
	}

	// A review pipeline's job token may not delete states: the janitor refuses to run with it.
	withJobToken := runStateJanitor(t, project, jobToken, nil)
	if withJobToken.Err == nil || !strings.Contains(withJobToken.Log, "answered HTTP 401: TF_STATE_JANITOR_TOKEN needs the api scope") {
		t.Errorf("the janitor with a job token: %v, want a failure naming TF_STATE_JANITOR_TOKEN:\n%s", withJobToken.Err, withJobToken.Log)
	}
}

// putState stores the state (locked, if the case says so), its environment, and its age.
func putState(t *testing.T, serverURL string, gitlab *gitlabstate.Server, token string, c stateCast) {
	t.Helper()
	url := serverURL + gitlab.StatePath(c.name)
	send := func(method, url, body string) {
		req, err := http.NewRequest(method, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("PRIVATE-TOKEN", token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s %s: HTTP %d", method, url, resp.StatusCode)
		}
	}
	send(http.MethodPost, url, c.body)
	if c.locked {
		send(http.MethodPost, url+"/lock", `{"ID":"lock-1","Operation":"OperationTypeApply"}`)
	}
	if !gitlab.SetStateUpdated(c.name, time.Now().Add(-c.age)) {
		t.Fatalf("state %s was not stored", c.name)
	}
	if c.environment != "" {
		if _, err := gitlab.PutEnvironment(c.environment, strings.ReplaceAll(c.environment, "/", "-"), c.envState); err != nil {
			t.Fatal(err)
		}
	}
}

// runStateJanitor runs the janitor's scheduled pipeline with SWEEP_STATES=true for the project:
// only delete_stale_states runs. vars are more CI/CD variables.
func runStateJanitor(t *testing.T, project Project, janitorToken string, vars map[string]string) *JobResult {
	t.Helper()
	// The schedule's variables and the protected one.
	variables := map[string]string{"SWEEP_STATES": "true", "TF_STATE_JANITOR_TOKEN": janitorToken}
	for k, v := range vars {
		variables[k] = v
	}
	runner := &Runner{
		Command:   gitlabCILocal(t),
		Project:   project,
		Variables: variables,
		Masked:    []string{project.JobToken, janitorToken},
		Env:       map[string]string{"PATH": os.Getenv("PATH"), "HOME": t.TempDir()},
		WorkDir:   t.TempDir(),
	}
	return runScheduled(context.Background(), t, runner, janitorDir(t), "delete_stale_states")
}
