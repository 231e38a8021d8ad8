package gitlabstate

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// JobTokenUser is the basic-auth user name that goes with a CI job token.
const JobTokenUser = "gitlab-ci-token"

// maxStateBytes bounds a request body; GitLab's default limit is larger, but
// a test state is small and a runaway body should fail fast.
const maxStateBytes = 64 << 20

// User is a GitLab user allowed to manage the project's states.
type User struct {
	// Username is what lock info reports as Who.
	Username string
	// JobToken authenticates as this user with the user name gitlab-ci-token,
	// as CI jobs do with $CI_JOB_TOKEN. Empty: none.
	JobToken string
	// PersonalAccessToken authenticates as this user with any user name.
	// Empty: none.
	PersonalAccessToken string
	// Maintainer gives the user the Maintainer role, which GitLab requires to
	// delete a state; other users may read, write and lock states.
	Maintainer bool
	// NotesAccess lets the user's access token read and write merge request
	// notes (notes.go): the Reporter role and the api scope.
	NotesAccess bool
}

// Config describes the one project the server knows.
type Config struct {
	// ProjectID is the numeric project ID, as $CI_PROJECT_ID.
	ProjectID string
	// ProjectPath is the project's full path, e.g. "my-group/my-app"; requests
	// may name the project by it, URL-encoded. Optional.
	ProjectPath string
	// Users may read and write every state of the project.
	Users []User
	// Logf, when set, receives one line per request (method, path, status).
	// Credentials are never passed to it.
	Logf func(format string, args ...any)
	// Now returns the current time; time.Now when nil.
	Now func() time.Time
}

// LockInfo is the lock information Terraform sends and GitLab answers, the
// JSON of Terraform's statemgr.LockInfo.
type LockInfo struct {
	ID        string    `json:"ID"`
	Operation string    `json:"Operation"`
	Info      string    `json:"Info"`
	Who       string    `json:"Who"`
	Version   string    `json:"Version"`
	Created   time.Time `json:"Created"`
	Path      string    `json:"Path"`
}

// State is a copy of one stored state.
type State struct {
	// Versions holds every stored version, oldest first; the last is the
	// state GET answers.
	Versions [][]byte
	// Lock is the lock held, nil when unlocked. Its Who is the GitLab user
	// that took it, as GitLab reports it.
	Lock *LockInfo
}

// Latest returns the newest version, or nil when there is none.
func (s State) Latest() []byte {
	if len(s.Versions) == 0 {
		return nil
	}
	return s.Versions[len(s.Versions)-1]
}

type state struct {
	versions [][]byte
	lock     *LockInfo
	// updated is when a version was last stored or the lock last taken.
	updated time.Time
}

// Server serves the Terraform state API of one project. It is safe for
// concurrent use; create it with [New].
type Server struct {
	cfg    Config
	mux    *http.ServeMux
	mu     sync.Mutex
	states map[string]*state
	envs   environmentStore
	notes  noteStore
}

var _ http.Handler = (*Server)(nil)

// New returns a server for cfg's project with no states.
func New(cfg Config) *Server {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Server{cfg: cfg, mux: http.NewServeMux(), states: map[string]*state{}}
	const prefix = "/api/v4/projects/{id}/terraform/state/{name}"
	s.mux.HandleFunc("GET "+prefix, s.getState)
	s.mux.HandleFunc("POST "+prefix, s.postState)
	s.mux.HandleFunc("DELETE "+prefix, s.deleteState)
	s.mux.HandleFunc("POST "+prefix+"/lock", s.lock)
	s.mux.HandleFunc("DELETE "+prefix+"/lock", s.unlock)
	s.routeNotes()
	s.routeEnvironments()
	s.mux.HandleFunc("POST /api/graphql", s.graphql)
	return s
}

// StatePath returns the URL path of a state, to append to a base URL such as
// "http://127.0.0.1:8080".
func (s *Server) StatePath(name string) string {
	return "/api/v4/projects/" + s.cfg.ProjectID + "/terraform/state/" + name
}

// State returns a copy of the named state and whether it exists.
func (s *Server) State(name string) (State, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.states[name]
	if !ok {
		return State{}, false
	}
	out := State{Versions: make([][]byte, len(st.versions))}
	for i, v := range st.versions {
		out.Versions[i] = slices.Clone(v)
	}
	if st.lock != nil {
		lock := *st.lock
		out.Lock = &lock
	}
	return out, true
}

// Names returns the names of the stored states, sorted.
func (s *Server) Names() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.states))
	for name := range s.states {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// ForceUnlock releases the named state's lock whoever holds it, as the
// Unlock action of GitLab's Terraform states page does. It returns the lock
// it released, or an error when the state does not exist or is not locked.
func (s *Server) ForceUnlock(name string) (LockInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.states[name]
	if !ok {
		return LockInfo{}, fmt.Errorf("state %q does not exist", name)
	}
	if st.lock == nil {
		return LockInfo{}, fmt.Errorf("state %q is not locked", name)
	}
	released := *st.lock
	st.lock = nil
	return released, nil
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	defer func() {
		if s.cfg.Logf != nil {
			s.cfg.Logf("%s %s -> %d", r.Method, r.URL.Path, rec.status)
		}
	}()
	user, ok := s.authenticate(r)
	if !ok {
		writeMessage(rec, http.StatusUnauthorized, "401 Unauthorized")
		return
	}
	r = r.WithContext(withUser(r.Context(), user))
	s.mux.ServeHTTP(rec, r)
}

// authenticate returns the user that the request's credentials name: a
// token header of GitLab's REST API, or basic auth.
func (s *Server) authenticate(r *http.Request) (string, bool) {
	if user, ok, given := s.authenticateHeader(r); given {
		return user, ok
	}
	name, password, ok := r.BasicAuth()
	if !ok || password == "" {
		return "", false
	}
	for _, u := range s.cfg.Users {
		if name == JobTokenUser && tokenEqual(u.JobToken, password) {
			return u.Username, true
		}
		if name != JobTokenUser && tokenEqual(u.PersonalAccessToken, password) {
			return u.Username, true
		}
	}
	return "", false
}

// maintainer reports whether the user has the Maintainer role.
func (s *Server) maintainer(username string) bool {
	for _, u := range s.cfg.Users {
		if u.Username == username {
			return u.Maintainer
		}
	}
	return false
}

func tokenEqual(want, got string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(want), []byte(got)) == 1
}

// stateName returns the request's state name, or answers 404 and returns
// false when the project is not this server's or the name is not one segment.
func (s *Server) stateName(w http.ResponseWriter, r *http.Request) (string, bool) {
	id := r.PathValue("id")
	if id != s.cfg.ProjectID && (s.cfg.ProjectPath == "" || id != s.cfg.ProjectPath) {
		writeMessage(w, http.StatusNotFound, "404 Project Not Found")
		return "", false
	}
	name := r.PathValue("name")
	if name == "" || strings.Contains(name, "/") {
		writeMessage(w, http.StatusNotFound, "404 Not Found")
		return "", false
	}
	return name, true
}

func (s *Server) getState(w http.ResponseWriter, r *http.Request) {
	name, ok := s.stateName(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	st, exists := s.states[name]
	var data []byte
	if exists && len(st.versions) > 0 {
		data = st.versions[len(st.versions)-1]
	}
	s.mu.Unlock()
	switch {
	case !exists:
		writeMessage(w, http.StatusNotFound, "404 Not Found")
	case data == nil:
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(data)
	}
}

func (s *Server) postState(w http.ResponseWriter, r *http.Request) {
	name, ok := s.stateName(w, r)
	if !ok {
		return
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxStateBytes))
	if err != nil {
		writeMessage(w, http.StatusRequestEntityTooLarge, "413 Request Entity Too Large")
		return
	}
	if len(data) == 0 {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	lockID, hasID := lockIDFromQuery(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.findOrCreate(name)
	if !lockMatches(st.lock, lockID, hasID) {
		writeMessage(w, http.StatusConflict, "409 Conflict: the state is locked by another operation")
		return
	}
	st.versions = append(st.versions, data)
	st.updated = s.cfg.Now().UTC()
	w.WriteHeader(http.StatusOK)
}

func (s *Server) deleteState(w http.ResponseWriter, r *http.Request) {
	name, ok := s.stateName(w, r)
	if !ok {
		return
	}
	if !s.maintainer(userFrom(r.Context())) {
		writeMessage(w, http.StatusForbidden, "403 Forbidden")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st, exists := s.states[name]
	switch {
	case !exists:
		writeMessage(w, http.StatusNotFound, "404 Not Found")
	case st.lock != nil:
		writeMessage(w, http.StatusConflict, "409 Conflict: cannot remove a locked state")
	default:
		delete(s.states, name)
		w.WriteHeader(http.StatusOK)
	}
}

func (s *Server) lock(w http.ResponseWriter, r *http.Request) {
	name, ok := s.stateName(w, r)
	if !ok {
		return
	}
	var req LockInfo
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
		writeMessage(w, http.StatusBadRequest, "400 Bad request - the body is not lock info JSON")
		return
	}
	if req.ID == "" {
		writeMessage(w, http.StatusBadRequest, "400 Bad request - ID is missing")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.findOrCreate(name)
	status := http.StatusOK
	if st.lock != nil {
		status = http.StatusConflict
	} else {
		st.lock = &LockInfo{
			ID:        req.ID,
			Operation: req.Operation,
			Info:      req.Info,
			Who:       userFrom(r.Context()),
			Version:   req.Version,
			Created:   s.cfg.Now().UTC(),
			Path:      req.Path,
		}
		st.updated = st.lock.Created
	}
	// GitLab answers with the request's Operation, Info, Version and Path but
	// the held lock's ID, Who and Created: the ID is what Terraform reads.
	answer := LockInfo{
		ID:        st.lock.ID,
		Operation: req.Operation,
		Info:      req.Info,
		Who:       st.lock.Who,
		Version:   req.Version,
		Created:   st.lock.Created,
		Path:      req.Path,
	}
	writeJSON(w, status, answer)
}

func (s *Server) unlock(w http.ResponseWriter, r *http.Request) {
	name, ok := s.stateName(w, r)
	if !ok {
		return
	}
	lockID, hasID := lockIDFromQuery(r)
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	if err != nil {
		writeMessage(w, http.StatusBadRequest, "400 Bad request - the body is too large")
		return
	}
	if len(strings.TrimSpace(string(body))) > 0 {
		var info LockInfo
		if err := json.Unmarshal(body, &info); err != nil {
			writeMessage(w, http.StatusBadRequest, "400 Bad request - the body is not lock info JSON")
			return
		}
		if info.ID != "" {
			lockID, hasID = info.ID, true
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st, exists := s.states[name]
	if !exists {
		writeMessage(w, http.StatusNotFound, "404 Not Found")
		return
	}
	// Without an ID the lock goes whoever holds it: terraform force-unlock and
	// GitLab's own Unlock button send none.
	if hasID && !lockMatches(st.lock, lockID, true) {
		writeMessage(w, http.StatusConflict, "409 Conflict: the lock ID does not match the lock held")
		return
	}
	st.lock = nil
	w.WriteHeader(http.StatusOK)
}

func (s *Server) findOrCreate(name string) *state {
	st, ok := s.states[name]
	if !ok {
		st = &state{updated: s.cfg.Now().UTC()}
		s.states[name] = st
	}
	return st
}

// lockMatches is GitLab's rule: with no lock held, only a request without an
// ID matches; with a lock held, only its ID does.
func lockMatches(held *LockInfo, id string, hasID bool) bool {
	if held == nil {
		return !hasID
	}
	return hasID && subtle.ConstantTimeCompare([]byte(held.ID), []byte(id)) == 1
}

func lockIDFromQuery(r *http.Request) (string, bool) {
	id := r.URL.Query().Get("ID")
	return id, id != ""
}

func writeMessage(w http.ResponseWriter, status int, message string) {
	writeJSON(w, status, map[string]string{"message": message})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

type userKey struct{}

func withUser(ctx context.Context, user string) context.Context {
	return context.WithValue(ctx, userKey{}, user)
}

func userFrom(ctx context.Context) string {
	user, _ := ctx.Value(userKey{}).(string)
	return user
}
