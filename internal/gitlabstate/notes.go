package gitlabstate

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// This file serves the part of GitLab's REST API that posts a plan report on
// a merge request:
//
//	GET  /api/v4/user                                               the token's user
//	GET  /api/v4/projects/:id/merge_requests/:iid/notes             newest first, paginated
//	POST /api/v4/projects/:id/merge_requests/:iid/notes             {"body": ...}: 201
//	PUT  /api/v4/projects/:id/merge_requests/:iid/notes/:note_id    {"body": ...}: 200
//
// Only a user with NotesAccess, authenticated with an access token, reads or
// writes notes: a CI job token answers 403, as GitLab's job token may not use
// the notes API. Only a note's author may edit it (403 otherwise). A body
// longer than GitLab's limit, 1,000,000 characters, is a 400. Every merge
// request IID exists.

// NoteSizeLimit is GitLab's limit of a note's body, in characters.
const NoteSizeLimit = 1_000_000

// Note is one merge request note as the API answers it.
type Note struct {
	ID        int64      `json:"id"`
	Body      string     `json:"body"`
	Author    NoteAuthor `json:"author"`
	System    bool       `json:"system"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt time.Time  `json:"updated_at"`
}

// NoteAuthor is a note's author.
type NoteAuthor struct {
	ID       int64  `json:"id"`
	Username string `json:"username"`
}

type noteStore struct {
	mu     sync.Mutex
	nextID int64
	byMR   map[int64][]*Note
}

func (s *Server) routeNotes() {
	const prefix = "/api/v4/projects/{id}/merge_requests/{iid}/notes"
	s.mux.HandleFunc("GET /api/v4/user", s.currentUser)
	s.mux.HandleFunc("GET "+prefix, s.listNotes)
	s.mux.HandleFunc("POST "+prefix, s.createNote)
	s.mux.HandleFunc("PUT "+prefix+"/{note}", s.updateNote)
}

// userID is a user's numeric ID: its place in Config.Users, from 1.
func (s *Server) userID(username string) int64 {
	for i, u := range s.cfg.Users {
		if u.Username == username {
			return int64(i + 1)
		}
	}
	return 0
}

func (s *Server) currentUser(w http.ResponseWriter, r *http.Request) {
	if viaJobToken(r) {
		writeMessage(w, http.StatusForbidden, "403 Forbidden - a CI job token may not read /user")
		return
	}
	user := userFrom(r.Context())
	writeJSON(w, http.StatusOK, NoteAuthor{ID: s.userID(user), Username: user})
}

// viaJobToken reports whether the request authenticates with a CI job token.
// It reads the headers in authenticateHeader's order.
func viaJobToken(r *http.Request) bool {
	if r.Header.Get("PRIVATE-TOKEN") != "" || strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
		return false
	}
	if r.Header.Get("JOB-TOKEN") != "" {
		return true
	}
	name, _, basic := r.BasicAuth()
	return basic && name == JobTokenUser
}

// noteAccess answers 404 for another project or an IID that is not a
// number, 403 for a job token or a user without NotesAccess, and returns the
// merge request's IID and the user otherwise.
func (s *Server) noteAccess(w http.ResponseWriter, r *http.Request) (int64, string, bool) {
	if id := r.PathValue("id"); id != s.cfg.ProjectID && (s.cfg.ProjectPath == "" || id != s.cfg.ProjectPath) {
		writeMessage(w, http.StatusNotFound, "404 Project Not Found")
		return 0, "", false
	}
	iid, err := strconv.ParseInt(r.PathValue("iid"), 10, 64)
	if err != nil || iid < 1 {
		writeMessage(w, http.StatusNotFound, "404 Merge Request Not Found")
		return 0, "", false
	}
	user := userFrom(r.Context())
	if viaJobToken(r) {
		writeMessage(w, http.StatusForbidden, "403 Forbidden - a CI job token may not use the notes API")
		return 0, "", false
	}
	if !s.notesAccess(user) {
		writeMessage(w, http.StatusForbidden, "403 Forbidden")
		return 0, "", false
	}
	return iid, user, true
}

func (s *Server) notesAccess(username string) bool {
	for _, u := range s.cfg.Users {
		if u.Username == username {
			return u.NotesAccess
		}
	}
	return false
}

func (s *Server) listNotes(w http.ResponseWriter, r *http.Request) {
	iid, _, ok := s.noteAccess(w, r)
	if !ok {
		return
	}
	notes := s.MergeRequestNotes(iid)
	slices.Reverse(notes)
	q := r.URL.Query()
	page, perPage := pageParam(q.Get("page"), 1, 0), pageParam(q.Get("per_page"), defaultPerPage, maxPerPage)
	start, end := min((page-1)*perPage, len(notes)), min(page*perPage, len(notes))
	setPageHeaders(w, r, page, perPage, len(notes))
	writeJSON(w, http.StatusOK, append([]Note{}, notes[start:end]...))
}

// noteBody reads {"body": ...}, answering 400 for a missing or too long one.
func noteBody(w http.ResponseWriter, r *http.Request) (string, bool) {
	var req struct {
		Body string `json:"body"`
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, 8*NoteSizeLimit))
	if err == nil {
		err = json.Unmarshal(data, &req)
	}
	switch {
	case err != nil || req.Body == "":
		writeMessage(w, http.StatusBadRequest, "400 Bad request - body is missing")
		return "", false
	case utf8.RuneCountInString(req.Body) > NoteSizeLimit:
		writeMessage(w, http.StatusBadRequest, "Note {:note=>[\"is too long (maximum is 1000000 characters)\"]}")
		return "", false
	}
	return req.Body, true
}

func (s *Server) createNote(w http.ResponseWriter, r *http.Request) {
	iid, user, ok := s.noteAccess(w, r)
	if !ok {
		return
	}
	body, ok := noteBody(w, r)
	if !ok {
		return
	}
	writeJSON(w, http.StatusCreated, s.AddMergeRequestNote(iid, user, body))
}

func (s *Server) updateNote(w http.ResponseWriter, r *http.Request) {
	iid, user, ok := s.noteAccess(w, r)
	if !ok {
		return
	}
	id, err := strconv.ParseInt(r.PathValue("note"), 10, 64)
	if err != nil {
		writeMessage(w, http.StatusNotFound, "404 Note Not Found")
		return
	}
	body, ok := noteBody(w, r)
	if !ok {
		return
	}
	n := &s.notes
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, note := range n.byMR[iid] {
		if note.ID != id {
			continue
		}
		if note.Author.Username != user {
			writeMessage(w, http.StatusForbidden, "403 Forbidden")
			return
		}
		note.Body, note.UpdatedAt = body, s.cfg.Now().UTC()
		writeJSON(w, http.StatusOK, *note)
		return
	}
	writeMessage(w, http.StatusNotFound, "404 Note Not Found")
}

// AddMergeRequestNote adds a note by username to merge request iid, as
// someone commenting does, and returns it.
func (s *Server) AddMergeRequestNote(iid int64, username, body string) Note {
	n := &s.notes
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.byMR == nil {
		n.byMR = map[int64][]*Note{}
	}
	n.nextID++
	now := s.cfg.Now().UTC()
	note := &Note{ID: n.nextID, Body: body, Author: NoteAuthor{ID: s.userID(username), Username: username}, CreatedAt: now, UpdatedAt: now}
	n.byMR[iid] = append(n.byMR[iid], note)
	return *note
}

// MergeRequestNotes returns the notes of merge request iid, oldest first.
func (s *Server) MergeRequestNotes(iid int64) []Note {
	n := &s.notes
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]Note, 0, len(n.byMR[iid]))
	for _, note := range n.byMR[iid] {
		out = append(out, *note)
	}
	return out
}
