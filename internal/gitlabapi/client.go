// Package gitlabapi reads what the provider needs from GitLab's REST API:
// the environments of a project, following GitLab's offset pagination; and
// writes the plan report's note on a merge request (notes.go).
//
// It is the only package that talks to GitLab. It returns the pure types of
// internal/gitlab and typed errors ([StatusError]) the provider words as
// diagnostics; a token never appears in an error or a URL it returns.
package gitlabapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlab"
)

// TokenKind says which header carries a token.
type TokenKind int

const (
	// AccessToken is a personal, project or group access token, sent as
	// PRIVATE-TOKEN.
	AccessToken TokenKind = iota
	// JobToken is a CI job token ($CI_JOB_TOKEN), sent as JOB-TOKEN.
	JobToken
)

// perPage is the page size asked for: GitLab's largest.
const perPage = 100

// maxPages bounds a listing, so a server that always answers a next page
// cannot keep a plan waiting forever: 100,000 environments.
const maxPages = 1000

// defaultTimeout bounds each request when the caller's context has no deadline.
const defaultTimeout = 30 * time.Second

// Client reads one GitLab instance's API.
type Client struct {
	base      *url.URL
	token     string
	kind      TokenKind
	http      *http.Client
	userAgent string
}

// New returns a client of the API at baseURL, e.g.
// https://gitlab.example.com/api/v4 ($CI_API_V4_URL). httpClient nil means a
// client with a 30-second timeout.
func New(baseURL, token string, kind TokenKind, httpClient *http.Client, userAgent string) (*Client, error) {
	base, err := ParseBaseURL(baseURL)
	if err != nil {
		return nil, err
	}
	if token == "" {
		return nil, errors.New("no GitLab token")
	}
	if httpClient == nil {
		httpClient = &http.Client{Timeout: defaultTimeout}
	}
	return &Client{base: base, token: token, kind: kind, http: httpClient, userAgent: userAgent}, nil
}

// ParseBaseURL checks that s is the URL of a GitLab REST API v4: absolute,
// http or https, with a host, its path ending in /api/v4, no query or
// fragment.
func ParseBaseURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("GitLab API URL %q is not a URL: %w", s, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("GitLab API URL %q must be an absolute http or https URL, e.g. https://gitlab.example.com/api/v4", s)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("GitLab API URL %q must not hold a query, a fragment or credentials", s)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	if !strings.HasSuffix(u.Path, "/api/v4") {
		return nil, fmt.Errorf("GitLab API URL %q must end with /api/v4 (as $CI_API_V4_URL does), e.g. https://gitlab.example.com/api/v4", s)
	}
	return u, nil
}

// StatusError is an answer other than 200 OK (or 201 Created to a POST).
type StatusError struct {
	// Method is the request's method; empty means GET.
	Method     string
	StatusCode int
	// URL is the request's URL; it never holds the token.
	URL string
	// Message is GitLab's "message" or "error", or the start of the body.
	Message string
}

func (e *StatusError) Error() string {
	method := e.Method
	if method == "" {
		method = http.MethodGet
	}
	return fmt.Sprintf("%s %s: %d %s: %s", method, e.URL, e.StatusCode, http.StatusText(e.StatusCode), e.Message)
}

// ListEnvironments returns every environment of project (its numeric ID or
// its path), in every state, following the pages GitLab announces.
func (c *Client) ListEnvironments(ctx context.Context, project string) ([]gitlab.Environment, error) {
	next := *c.base
	// A project path's '/' is sent as %2F, as GitLab expects.
	next.Path = c.base.Path + "/projects/" + project + "/environments"
	next.RawPath = c.base.EscapedPath() + "/projects/" + url.PathEscape(project) + "/environments"
	next.RawQuery = url.Values{"per_page": {strconv.Itoa(perPage)}, "page": {"1"}}.Encode()

	// Never nil: an empty list is an answer (every environment is gone).
	out := []gitlab.Environment{}
	seen := map[string]bool{}
	for range maxPages {
		page, nextURL, err := c.environmentsPage(ctx, &next)
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
		if nextURL == nil {
			return out, nil
		}
		if seen[nextURL.String()] {
			return nil, fmt.Errorf("list environments of project %s: GitLab announced page %s twice", project, nextURL.Redacted())
		}
		seen[nextURL.String()] = true
		next = *nextURL
	}
	return nil, fmt.Errorf("list environments of project %s: more than %d pages", project, maxPages)
}

// apiEnvironment is the part of GitLab's environment JSON the provider reads.
type apiEnvironment struct {
	ID    int64  `json:"id"`
	Name  string `json:"name"`
	Slug  string `json:"slug"`
	State string `json:"state"`
}

func (c *Client) environmentsPage(ctx context.Context, u *url.URL) ([]gitlab.Environment, *url.URL, error) {
	body, header, err := c.get(ctx, u)
	if err != nil {
		return nil, nil, err
	}
	var page []apiEnvironment
	if err := json.Unmarshal(body, &page); err != nil {
		return nil, nil, fmt.Errorf("GET %s: the answer is not a list of environments: %w", u.Redacted(), err)
	}
	envs := make([]gitlab.Environment, len(page))
	for i, e := range page {
		envs[i] = gitlab.Environment{ID: e.ID, Name: e.Name, Slug: e.Slug, State: gitlab.EnvironmentState(e.State)}
	}
	next, err := c.nextPage(u, header)
	return envs, next, err
}

// nextPage reads where the next page is: the Link header's rel="next" when it
// points at the same server (the token is never sent elsewhere), else
// X-Next-Page; nil at the last page.
func (c *Client) nextPage(current *url.URL, header http.Header) (*url.URL, error) {
	if link := linkNext(header.Get("Link")); link != "" {
		if u, err := current.Parse(link); err == nil && u.Scheme == c.base.Scheme && u.Host == c.base.Host {
			return u, nil
		}
	}
	n := strings.TrimSpace(header.Get("X-Next-Page"))
	if n == "" {
		return nil, nil
	}
	if _, err := strconv.Atoi(n); err != nil {
		return nil, fmt.Errorf("GET %s: X-Next-Page %q is not a page number", current.Redacted(), n)
	}
	next := *current
	q := next.Query()
	q.Set("page", n)
	next.RawQuery = q.Encode()
	return &next, nil
}

// linkNext returns the target of rel="next" in an RFC 8288 Link header.
func linkNext(header string) string {
	for _, part := range strings.Split(header, ",") {
		target, params, ok := strings.Cut(strings.TrimSpace(part), ";")
		if !ok {
			continue
		}
		for _, p := range strings.Split(params, ";") {
			if k, v, _ := strings.Cut(strings.TrimSpace(p), "="); k == "rel" && strings.Trim(v, `"`) == "next" {
				return strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(target), "<"), ">")
			}
		}
	}
	return ""
}

// maxBody bounds an answer: 100 environments are a few hundred kilobytes.
const maxBody = 16 << 20

func (c *Client) get(ctx context.Context, u *url.URL) ([]byte, http.Header, error) {
	return c.do(ctx, http.MethodGet, u, nil)
}

// do sends a request with the token and, when body is not nil, the body as
// JSON, and returns the answer's body and header; an answer other than 200
// (or 201 to a POST) is a StatusError.
func (c *Client) do(ctx context.Context, method string, u *url.URL, body any) ([]byte, http.Header, error) {
	var payload io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return nil, nil, fmt.Errorf("%s %s: %w", method, u.Redacted(), err)
		}
		payload = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), payload)
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: %w", method, u.Redacted(), err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.userAgent != "" {
		req.Header.Set("User-Agent", c.userAgent)
	}
	if c.kind == JobToken {
		req.Header.Set("JOB-TOKEN", c.token)
	} else {
		req.Header.Set("PRIVATE-TOKEN", c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		// url.Error repeats the URL, which holds no token.
		return nil, nil, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: read the answer: %w", method, u.Redacted(), err)
	}
	if resp.StatusCode != http.StatusOK && (method != http.MethodPost || resp.StatusCode != http.StatusCreated) {
		return nil, nil, &StatusError{Method: method, StatusCode: resp.StatusCode, URL: u.Redacted(), Message: errorMessage(answer)}
	}
	return answer, resp.Header, nil
}

// errorMessage reads GitLab's {"message": ...} or {"error": ...}, or the
// start of the body.
func errorMessage(body []byte) string {
	var answer struct {
		Message any    `json:"message"`
		Error   string `json:"error"`
	}
	if json.Unmarshal(body, &answer) == nil {
		switch m := answer.Message.(type) {
		case string:
			return m
		case nil:
		default:
			if b, err := json.Marshal(m); err == nil {
				return string(b)
			}
		}
		if answer.Error != "" {
			return answer.Error
		}
	}
	s := strings.TrimSpace(string(body))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
