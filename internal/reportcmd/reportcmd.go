// Package reportcmd is the provider binary's `report` mode: it reads the JSON
// of a saved plan on standard input, writes the plan report
// (internal/planreport) to a file for the job's artifacts, and, in a merge
// request pipeline with MR_NOTE_TOKEN set, posts it as a note of the merge
// request, updating the note an earlier pipeline posted for the same
// environment.
//
// It is a mode of the provider binary so that a plan job needs nothing but
// what `terraform init` downloaded. The token is read from the environment,
// never from a flag, and never printed.
package reportcmd

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlabapi"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/planreport"
)

// Name is the first argument that selects this mode.
const Name = "report"

// DefaultOut is the report's file name: the plan job's artifact.
const DefaultOut = "gitlabk8s-plan.md"

// TokenVariable holds the token that posts the note.
const TokenVariable = "MR_NOTE_TOKEN"

// Env is what the command reads of its environment: the job's predefined
// CI/CD variables and TokenVariable.
type Env func(string) string

// IO are the command's streams and its HTTP client (nil: a default one).
type IO struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	HTTP           *http.Client
}

// Run runs `report` with args (those after "report") and returns the exit
// code: 2 for bad arguments, 1 when the report cannot be written. A note that
// cannot be posted is a warning: the report is still the job's artifact, and
// the deploy that needs the plan job still runs.
func Run(ctx context.Context, args []string, env Env, streams IO) int {
	flags := flag.NewFlagSet(Name, flag.ContinueOnError)
	flags.SetOutput(streams.Stderr)
	environment := flags.String("environment", env("CI_ENVIRONMENT_NAME"), "the environment (state) the plan is of; default $CI_ENVIRONMENT_NAME")
	out := flags.String("out", DefaultOut, "the file to write the whole report to, for the job's artifacts")
	flags.Usage = func() {
		fmt.Fprintf(streams.Stderr, "Usage: terraform show -json <plan file> | terraform-provider-gitlabk8s %s [-environment name] [-out file]\n\n", Name)
		fmt.Fprintf(streams.Stderr, "Writes the plan's Kubernetes changes as Markdown and, with $%s set in a merge request pipeline, posts them on the merge request.\n\n", TokenVariable)
		flags.PrintDefaults()
	}
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if *environment == "" {
		fmt.Fprintln(streams.Stderr, "report: no environment: pass -environment or run in a job with an environment ($CI_ENVIRONMENT_NAME).")
		return 2
	}
	plan, err := planreport.Parse(streams.Stdin)
	if err != nil {
		fmt.Fprintf(streams.Stderr, "report: %v\n", err)
		return 1
	}
	opts := planreport.Options{Environment: *environment, Commit: env("CI_COMMIT_SHORT_SHA"), JobURL: env("CI_JOB_URL")}
	if err := os.WriteFile(*out, []byte(planreport.Render(plan, opts)), 0o644); err != nil {
		fmt.Fprintf(streams.Stderr, "report: write the report: %v\n", err)
		return 1
	}
	fmt.Fprintf(streams.Stdout, "Wrote the plan report of %s to %s.\n", *environment, *out)

	opts.Limit, opts.FullReportURL = planreport.NoteSizeLimit, artifactURL(env, *out)
	if msg, err := postNote(ctx, env, streams.HTTP, plan, opts); err != nil {
		fmt.Fprintf(streams.Stderr, "WARNING: the plan report was not posted on the merge request: %v\n", err)
	} else {
		fmt.Fprintln(streams.Stdout, msg)
	}
	return 0
}

// artifactURL is where GitLab serves the file out of the job's artifacts, or
// "" when out is outside the project folder.
func artifactURL(env Env, out string) string {
	jobURL, projectDir := env("CI_JOB_URL"), env("CI_PROJECT_DIR")
	if jobURL == "" || projectDir == "" {
		return ""
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return ""
	}
	rel, err := filepath.Rel(projectDir, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return ""
	}
	return strings.TrimSuffix(jobURL, "/") + "/artifacts/file/" + filepath.ToSlash(rel)
}

// postNote creates or updates the merge request's note of the environment,
// and says what it did.
func postNote(ctx context.Context, env Env, httpClient *http.Client, plan planreport.Plan, opts planreport.Options) (string, error) {
	token := env(TokenVariable)
	if token == "" {
		return fmt.Sprintf("$%s is not set: the report is the job's artifact only.", TokenVariable), nil
	}
	iid, err := strconv.ParseInt(env("CI_MERGE_REQUEST_IID"), 10, 64)
	if err != nil {
		return "Not a merge request pipeline: no note.", nil
	}
	project := env("CI_PROJECT_ID")
	if project == "" {
		return "", errors.New("$CI_PROJECT_ID is not set")
	}
	client, err := gitlabapi.New(env("CI_API_V4_URL"), token, gitlabapi.AccessToken, httpClient, "terraform-provider-gitlabk8s report")
	if err != nil {
		return "", fmt.Errorf("$CI_API_V4_URL: %w", err)
	}
	note, err := earlierNote(ctx, client, project, iid, planreport.Marker(opts.Environment))
	if err != nil {
		return "", tokenHint(err)
	}
	body := planreport.Render(plan, opts)
	if note != nil {
		if _, err := client.UpdateMergeRequestNote(ctx, project, iid, note.ID, body); err != nil {
			return "", tokenHint(err)
		}
		return fmt.Sprintf("Updated note %d of merge request !%d.", note.ID, iid), nil
	}
	if plan.Empty() {
		return fmt.Sprintf("No changes and no earlier note: nothing posted on merge request !%d.", iid), nil
	}
	created, err := client.CreateMergeRequestNote(ctx, project, iid, body)
	if err != nil {
		return "", tokenHint(err)
	}
	return fmt.Sprintf("Posted note %d on merge request !%d.", created.ID, iid), nil
}

// earlierNote finds the note this token's user posted for the environment,
// by the report's hidden marker; anyone else's note quoting it is not ours
// to edit.
func earlierNote(ctx context.Context, client *gitlabapi.Client, project string, iid int64, marker string) (*gitlabapi.Note, error) {
	user, err := client.CurrentUser(ctx)
	if err != nil {
		return nil, err
	}
	notes, err := client.ListMergeRequestNotes(ctx, project, iid)
	if err != nil {
		return nil, err
	}
	for i, note := range notes {
		if !note.System && note.Author.ID == user.ID && strings.HasPrefix(note.Body, marker+"\n") {
			return &notes[i], nil
		}
	}
	return nil, nil
}

// tokenHint adds what the token needs to an answer that refused it.
func tokenHint(err error) error {
	var status *gitlabapi.StatusError
	if errors.As(err, &status) && (status.StatusCode == http.StatusUnauthorized || status.StatusCode == http.StatusForbidden) {
		return fmt.Errorf("$%s must be a project access token with the Reporter role and the api scope: %w", TokenVariable, err)
	}
	return err
}
