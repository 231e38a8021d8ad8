package gitlabstate

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

type statesAnswer struct {
	Data struct {
		Project *struct {
			TerraformStates struct {
				Count    int                  `json:"count"`
				Nodes    []TerraformStateNode `json:"nodes"`
				PageInfo struct {
					HasNextPage bool    `json:"hasNextPage"`
					EndCursor   *string `json:"endCursor"`
				} `json:"pageInfo"`
			} `json:"terraformStates"`
		} `json:"project"`
	} `json:"data"`
	Errors []struct {
		Message string `json:"message"`
	} `json:"errors"`
}

const statesQuery = `query($fullPath: ID!, $after: String) { project(fullPath: $fullPath) { terraformStates(first: 100, after: $after) { nodes { name } } } }`

func queryStates(t *testing.T, c *client, fullPath string, first int, after *string) statesAnswer {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": statesQuery, "variables": map[string]any{"fullPath": fullPath, "first": first, "after": after}})
	resp := c.expect("POST", "/api/graphql", string(body), 200)
	var answer statesAnswer
	if err := json.Unmarshal([]byte(resp.body), &answer); err != nil {
		t.Fatalf("answer %q: %v", resp.body, err)
	}
	return answer
}

// The states come by name, in pages joined by cursors, with their lock as GitLab shows it.
func TestGraphQL_listsStatesInPages(t *testing.T) {
	_, c := newTestServer(t)
	for i := range 5 {
		c.expect("POST", fmt.Sprintf("/api/v4/projects/42/terraform/state/s%d", i), `{"version":4}`, 200)
	}
	c.expect("POST", "/api/v4/projects/42/terraform/state/s3/lock", lockBody("l1"), 200)
	pat := &client{t: t, base: c.base, user: "alice", password: testPAT}

	var names []string
	var after *string
	for page := 0; ; page++ {
		answer := queryStates(t, pat, "my-group/my-app", 2, after)
		if len(answer.Errors) > 0 || answer.Data.Project == nil {
			t.Fatalf("page %d: %+v", page, answer)
		}
		states := answer.Data.Project.TerraformStates
		if states.Count != 5 {
			t.Errorf("count = %d, want 5", states.Count)
		}
		for _, n := range states.Nodes {
			names = append(names, n.Name)
			locked := n.LockedAt != nil && n.LockedByUser != nil && n.LockedByUser.Username == "alice" && n.LockedAt.Equal(testNow)
			if locked != (n.Name == "s3") || !n.UpdatedAt.Equal(testNow) {
				t.Errorf("state %s: locked at %v by %+v, updated %v", n.Name, n.LockedAt, n.LockedByUser, n.UpdatedAt)
			}
		}
		if !states.PageInfo.HasNextPage {
			break
		}
		after = states.PageInfo.EndCursor
		if page > 5 {
			t.Fatal("pagination does not end")
		}
	}
	if fmt.Sprint(names) != "[s0 s1 s2 s3 s4]" {
		t.Errorf("states listed %v, want s0..s4 once each, by name", names)
	}
}

// A job token cannot use GraphQL, another project is null, and a query the stand-in does not
// know is an error rather than a made-up answer.
func TestGraphQL_refusesWhatItCannotAnswer(t *testing.T) {
	_, c := newTestServer(t)
	if answer := queryStates(t, c, "my-group/my-app", 100, nil); len(answer.Errors) == 0 {
		t.Errorf("a job token listed states: %+v", answer)
	}
	pat := &client{t: t, base: c.base, user: "alice", password: testPAT}
	if answer := queryStates(t, pat, "other/project", 100, nil); answer.Data.Project != nil || len(answer.Errors) > 0 {
		t.Errorf("another project: %+v, want project null", answer)
	}
	resp := pat.expect("POST", "/api/graphql", `{"query":"{ currentUser { username } }"}`, 200)
	if want := "answers only"; !json.Valid([]byte(resp.body)) || !strings.Contains(resp.body, want) {
		t.Errorf("unknown query answered %s, want an error saying what it %s", resp.body, want)
	}
}
