package gitlabapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlabstate"
)

func TestMergeRequestNotes_listEveryPageCreateAndUpdate(t *testing.T) {
	srv := gitlabstate.New(gitlabstate.Config{ProjectID: "4242", ProjectPath: "my-group/my-app", Users: []gitlabstate.User{
		{Username: "reviewer", PersonalAccessToken: "glpat-reviewer", NotesAccess: true},
		{Username: "project_4242_bot", PersonalAccessToken: accessToken, NotesAccess: true},
	}})
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	for i := range 250 {
		srv.AddMergeRequestNote(7, "reviewer", fmt.Sprintf("comment %d", i))
	}
	c, err := New(hs.URL+"/api/v4", accessToken, AccessToken, nil, "test")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	me, err := c.CurrentUser(ctx)
	if err != nil || me.Username != "project_4242_bot" {
		t.Fatalf("CurrentUser = %+v, %v; want project_4242_bot", me, err)
	}
	created, err := c.CreateMergeRequestNote(ctx, "my-group/my-app", 7, "report")
	if err != nil || created.Author.ID != me.ID {
		t.Fatalf("CreateMergeRequestNote = %+v, %v; want a note by %+v", created, err, me)
	}
	notes, err := c.ListMergeRequestNotes(ctx, "4242", 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 251 || notes[0].ID != created.ID {
		t.Fatalf("ListMergeRequestNotes: %d notes, the first %+v; want 251, newest first", len(notes), notes[0])
	}
	if _, err := c.UpdateMergeRequestNote(ctx, "4242", 7, created.ID, "report, updated"); err != nil {
		t.Fatal(err)
	}
	if got := srv.MergeRequestNotes(7)[250].Body; got != "report, updated" {
		t.Errorf("the note reads %q after the update", got)
	}
	// Another's note is not the token's to edit: a typed error naming the method.
	_, err = c.UpdateMergeRequestNote(ctx, "4242", 7, notes[1].ID, "hijacked")
	var status *StatusError
	if !errors.As(err, &status) || status.StatusCode != http.StatusForbidden || status.Method != http.MethodPut {
		t.Errorf("updating another's note: %v, want a 403 StatusError of a PUT", err)
	}
}
