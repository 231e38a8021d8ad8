package gitlabstate

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// This file serves GitLab's environments API, the part a janitor reads:
//
//	GET /api/v4/projects/:id/environments[?states=&name=&search=&page=&per_page=]
//
// with GitLab's offset pagination: page (default 1), per_page (default 20,
// at most 100), and the headers X-Page, X-Per-Page, X-Total, X-Total-Pages,
// X-Next-Page and X-Prev-Page (empty at the ends) and Link (rel next, prev,
// first, last). states is available, stopping or stopped; anything else is a
// 400, as are name and search together and a search shorter than 3
// characters. Environments are listed by ID, as GitLab lists them.

// Environment is one environment as the API answers it.
type Environment struct {
	ID        int64     `json:"id"`
	Name      string    `json:"name"`
	Slug      string    `json:"slug"`
	State     string    `json:"state"`
	Tier      string    `json:"tier"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Environment states GitLab reports.
const (
	EnvironmentAvailable = "available"
	EnvironmentStopping  = "stopping"
	EnvironmentStopped   = "stopped"
)

var environmentStates = []string{EnvironmentAvailable, EnvironmentStopping, EnvironmentStopped}

// Pagination defaults and limits of GitLab's REST API.
const (
	defaultPerPage = 20
	maxPerPage     = 100
)

type environmentStore struct {
	mu     sync.Mutex
	nextID int64
	byID   map[int64]*Environment
}

// PutEnvironment creates the environment name with slug in state, or, when
// it exists, sets its state. It returns the environment as the API lists it.
func (s *Server) PutEnvironment(name, slug, state string) (Environment, error) {
	if !slices.Contains(environmentStates, state) {
		return Environment{}, fmt.Errorf("environment state %q is not one of %v", state, environmentStates)
	}
	e := &s.envs
	e.mu.Lock()
	defer e.mu.Unlock()
	now := s.cfg.Now().UTC()
	for _, env := range e.byID {
		if env.Name == name {
			env.State, env.UpdatedAt = state, now
			return *env, nil
		}
	}
	if e.byID == nil {
		e.byID = map[int64]*Environment{}
	}
	e.nextID++
	env := &Environment{ID: e.nextID, Name: name, Slug: slug, State: state, Tier: tierOf(name), CreatedAt: now, UpdatedAt: now}
	e.byID[env.ID] = env
	return *env, nil
}

// DeleteEnvironment removes the environment name, as deleting a stopped
// environment in GitLab does. It reports whether there was one.
func (s *Server) DeleteEnvironment(name string) bool {
	e := &s.envs
	e.mu.Lock()
	defer e.mu.Unlock()
	for id, env := range e.byID {
		if env.Name == name {
			delete(e.byID, id)
			return true
		}
	}
	return false
}

// Environments returns every environment, by ID.
func (s *Server) Environments() []Environment {
	e := &s.envs
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Environment, 0, len(e.byID))
	for _, env := range e.byID {
		out = append(out, *env)
	}
	slices.SortFunc(out, func(a, b Environment) int { return int(a.ID - b.ID) })
	return out
}

// tierOf guesses the tier as GitLab does for environments created without one.
func tierOf(name string) string {
	switch lower := strings.ToLower(name); {
	case strings.HasPrefix(lower, "review"):
		return "development"
	case strings.Contains(lower, "prod"):
		return "production"
	case strings.Contains(lower, "stag"):
		return "staging"
	default:
		return "other"
	}
}

func (s *Server) routeEnvironments() {
	s.mux.HandleFunc("GET /api/v4/projects/{id}/environments", s.listEnvironments)
}

func (s *Server) listEnvironments(w http.ResponseWriter, r *http.Request) {
	if id := r.PathValue("id"); id != s.cfg.ProjectID && (s.cfg.ProjectPath == "" || id != s.cfg.ProjectPath) {
		writeMessage(w, http.StatusNotFound, "404 Project Not Found")
		return
	}
	q := r.URL.Query()
	states, name, search := q.Get("states"), q.Get("name"), q.Get("search")
	switch {
	case states != "" && !slices.Contains(environmentStates, states):
		writeMessage(w, http.StatusBadRequest, "400 Bad request - states does not have a valid value")
		return
	case name != "" && search != "":
		writeMessage(w, http.StatusBadRequest, "400 Bad request - name, search are mutually exclusive")
		return
	case search != "" && len(search) < 3:
		writeMessage(w, http.StatusBadRequest, "400 Bad request - search must be at least 3 characters")
		return
	}
	page, perPage := pageParam(q.Get("page"), 1, 0), pageParam(q.Get("per_page"), defaultPerPage, maxPerPage)

	var matching []Environment
	for _, env := range s.Environments() {
		if (states == "" || env.State == states) && (name == "" || env.Name == name) && (search == "" || strings.Contains(env.Name, search)) {
			matching = append(matching, env)
		}
	}
	total := len(matching)
	start, end := min((page-1)*perPage, total), min(page*perPage, total)
	setPageHeaders(w, r, page, perPage, total)
	writeJSON(w, http.StatusOK, append([]Environment{}, matching[start:end]...))
}

// pageParam reads page or per_page as GitLab does: missing or not a positive
// number means the default; per_page above the limit means the limit.
func pageParam(v string, def, limit int) int {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return def
	}
	if limit > 0 && n > limit {
		return limit
	}
	return n
}

// setPageHeaders writes GitLab's offset-pagination headers.
func setPageHeaders(w http.ResponseWriter, r *http.Request, page, perPage, total int) {
	pages := max(1, (total+perPage-1)/perPage)
	next, prev := "", ""
	if page < pages {
		next = strconv.Itoa(page + 1)
	}
	if page > 1 {
		prev = strconv.Itoa(page - 1)
	}
	h := w.Header()
	h.Set("X-Page", strconv.Itoa(page))
	h.Set("X-Per-Page", strconv.Itoa(perPage))
	h.Set("X-Total", strconv.Itoa(total))
	h.Set("X-Total-Pages", strconv.Itoa(pages))
	h.Set("X-Next-Page", next)
	h.Set("X-Prev-Page", prev)

	link := func(p int, rel string) string {
		u := url.URL{Scheme: "http", Host: r.Host, Path: r.URL.Path, RawPath: r.URL.RawPath}
		if r.TLS != nil {
			u.Scheme = "https"
		}
		q := r.URL.Query()
		q.Set("page", strconv.Itoa(p))
		q.Set("per_page", strconv.Itoa(perPage))
		u.RawQuery = q.Encode()
		return fmt.Sprintf("<%s>; rel=%q", u.String(), rel)
	}
	var links []string
	if prev != "" {
		links = append(links, link(page-1, "prev"))
	}
	if next != "" {
		links = append(links, link(page+1, "next"))
	}
	links = append(links, link(1, "first"), link(pages, "last"))
	h.Set("Link", strings.Join(links, ", "))
}

// authenticateHeader checks the token headers GitLab's REST API accepts:
// PRIVATE-TOKEN (a personal, project or group access token), JOB-TOKEN (a CI
// job token) and Authorization: Bearer (an access token). given is false when
// the request has none of them.
func (s *Server) authenticateHeader(r *http.Request) (user string, ok, given bool) {
	token, job := r.Header.Get("PRIVATE-TOKEN"), false
	if bearer, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); found && token == "" {
		token = bearer
	}
	if token == "" {
		token, job = r.Header.Get("JOB-TOKEN"), true
	}
	if token == "" {
		return "", false, false
	}
	for _, u := range s.cfg.Users {
		if (job && tokenEqual(u.JobToken, token)) || (!job && tokenEqual(u.PersonalAccessToken, token)) {
			return u.Username, true, true
		}
	}
	return "", false, true
}
