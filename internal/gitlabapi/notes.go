package gitlabapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// User is the user a token authenticates as.
type User struct {
	ID       int64  `json:"id"`
	Username string `json:"username"`
}

// Note is a merge request note, as far as the report reads it.
type Note struct {
	ID     int64  `json:"id"`
	Body   string `json:"body"`
	System bool   `json:"system"`
	Author User   `json:"author"`
}

// CurrentUser returns the token's user (GET /user): for a project access
// token, the project's bot user.
func (c *Client) CurrentUser(ctx context.Context) (User, error) {
	u := *c.base
	u.Path = c.base.Path + "/user"
	u.RawPath = ""
	body, _, err := c.get(ctx, &u)
	if err != nil {
		return User{}, err
	}
	var user User
	if err := json.Unmarshal(body, &user); err != nil || user.ID == 0 {
		return User{}, fmt.Errorf("GET %s: the answer is not a user", u.Redacted())
	}
	return user, nil
}

// mergeRequestNotesURL is the notes of merge request iid of project (its
// numeric ID or its path), with the note's ID appended when noteID > 0.
func (c *Client) mergeRequestNotesURL(project string, iid, noteID int64) *url.URL {
	u := *c.base
	tail := "/merge_requests/" + strconv.FormatInt(iid, 10) + "/notes"
	if noteID > 0 {
		tail += "/" + strconv.FormatInt(noteID, 10)
	}
	// A project path's '/' is sent as %2F, as GitLab expects.
	u.Path = c.base.Path + "/projects/" + project + tail
	u.RawPath = c.base.EscapedPath() + "/projects/" + url.PathEscape(project) + tail
	return &u
}

// ListMergeRequestNotes returns every note of merge request iid, following
// the pages GitLab announces.
func (c *Client) ListMergeRequestNotes(ctx context.Context, project string, iid int64) ([]Note, error) {
	next := c.mergeRequestNotesURL(project, iid, 0)
	next.RawQuery = url.Values{"per_page": {strconv.Itoa(perPage)}, "page": {"1"}}.Encode()
	var out []Note
	seen := map[string]bool{}
	for range maxPages {
		body, header, err := c.get(ctx, next)
		if err != nil {
			return nil, err
		}
		var page []Note
		if err := json.Unmarshal(body, &page); err != nil {
			return nil, fmt.Errorf("GET %s: the answer is not a list of notes: %w", next.Redacted(), err)
		}
		out = append(out, page...)
		nextURL, err := c.nextPage(next, header)
		if err != nil || nextURL == nil {
			return out, err
		}
		if seen[nextURL.String()] {
			return nil, fmt.Errorf("list notes of merge request !%d: GitLab announced page %s twice", iid, nextURL.Redacted())
		}
		seen[nextURL.String()] = true
		next = nextURL
	}
	return nil, fmt.Errorf("list notes of merge request !%d: more than %d pages", iid, maxPages)
}

// CreateMergeRequestNote adds a note with body to merge request iid.
func (c *Client) CreateMergeRequestNote(ctx context.Context, project string, iid int64, body string) (Note, error) {
	return c.sendNote(ctx, http.MethodPost, c.mergeRequestNotesURL(project, iid, 0), body)
}

// UpdateMergeRequestNote replaces the body of note noteID of merge request
// iid; GitLab lets only the note's author do so.
func (c *Client) UpdateMergeRequestNote(ctx context.Context, project string, iid, noteID int64, body string) (Note, error) {
	return c.sendNote(ctx, http.MethodPut, c.mergeRequestNotesURL(project, iid, noteID), body)
}

func (c *Client) sendNote(ctx context.Context, method string, u *url.URL, body string) (Note, error) {
	answer, _, err := c.do(ctx, method, u, map[string]string{"body": body})
	if err != nil {
		return Note{}, err
	}
	var note Note
	if err := json.Unmarshal(answer, &note); err != nil {
		return Note{}, fmt.Errorf("%s %s: the answer is not a note: %w", method, u.Redacted(), err)
	}
	return note, nil
}
