package gitlabstate

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// graphQLRequest is a GraphQL request body.
type graphQLRequest struct {
	Query     string `json:"query"`
	Variables struct {
		FullPath string `json:"fullPath"`
		First    *int   `json:"first"`
		After    string `json:"after"`
	} `json:"variables"`
}

// TerraformStateNode is one state as GitLab's GraphQL API lists it.
type TerraformStateNode struct {
	Name         string     `json:"name"`
	UpdatedAt    time.Time  `json:"updatedAt"`
	LockedAt     *time.Time `json:"lockedAt"`
	LockedByUser *struct {
		Username string `json:"username"`
	} `json:"lockedByUser"`
}

// graphQLPageSize is GitLab's default and largest page of a connection.
const graphQLPageSize = 100

func (s *Server) graphql(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("JOB-TOKEN") != "" || isBasicJobToken(r) {
		writeJSON(w, http.StatusOK, graphQLError("The resource that you are attempting to access does not exist or you don't have permission to perform this action"))
		return
	}
	var req graphQLRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, graphQLError("Invalid request body: "+err.Error()))
		return
	}
	if !strings.Contains(req.Query, "terraformStates") {
		writeJSON(w, http.StatusOK, graphQLError("this stand-in answers only project(fullPath:) { terraformStates }"))
		return
	}
	if req.Variables.FullPath != s.cfg.ProjectPath || s.cfg.ProjectPath == "" {
		writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"project": nil}})
		return
	}
	first := graphQLPageSize
	if req.Variables.First != nil {
		first = min(max(*req.Variables.First, 1), graphQLPageSize)
	}
	nodes := s.stateNodes()
	start := 0
	if req.Variables.After != "" {
		i, ok := decodeCursor(req.Variables.After)
		if !ok {
			writeJSON(w, http.StatusOK, graphQLError("Please provide a valid cursor"))
			return
		}
		start = min(i+1, len(nodes))
	}
	end := min(start+first, len(nodes))
	pageInfo := map[string]any{"hasNextPage": end < len(nodes), "endCursor": nil}
	if end > start {
		pageInfo["endCursor"] = encodeCursor(end - 1)
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"project": map[string]any{
		"terraformStates": map[string]any{"count": len(nodes), "nodes": nodes[start:end], "pageInfo": pageInfo},
	}}})
}

// stateNodes lists every state by name.
func (s *Server) stateNodes() []TerraformStateNode {
	s.mu.Lock()
	defer s.mu.Unlock()
	nodes := make([]TerraformStateNode, 0, len(s.states))
	for name, st := range s.states {
		node := TerraformStateNode{Name: name, UpdatedAt: st.updated}
		if st.lock != nil {
			locked := st.lock.Created
			node.LockedAt = &locked
			node.LockedByUser = &struct {
				Username string `json:"username"`
			}{Username: st.lock.Who}
		}
		nodes = append(nodes, node)
	}
	slices.SortFunc(nodes, func(a, b TerraformStateNode) int { return strings.Compare(a.Name, b.Name) })
	return nodes
}

// SetStateUpdated sets when the named state last changed, as if it had not
// changed since; it reports whether the state exists.
func (s *Server) SetStateUpdated(name string, at time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.states[name]
	if ok {
		st.updated = at.UTC()
		if st.lock != nil {
			st.lock.Created = at.UTC()
		}
	}
	return ok
}

func isBasicJobToken(r *http.Request) bool {
	user, _, ok := r.BasicAuth()
	return ok && user == JobTokenUser
}

func graphQLError(message string) map[string]any {
	return map[string]any{"errors": []any{map[string]any{"message": message}}}
}

func encodeCursor(i int) string {
	return base64.StdEncoding.EncodeToString([]byte(strconv.Itoa(i)))
}

func decodeCursor(c string) (int, bool) {
	b, err := base64.StdEncoding.DecodeString(c)
	if err != nil {
		return 0, false
	}
	i, err := strconv.Atoi(string(b))
	return i, err == nil && i >= 0
}
