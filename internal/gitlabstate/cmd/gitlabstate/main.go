// Command gitlabstate serves GitLab's Terraform state API on loopback for the
// demo and for tests driven from a shell. States live in memory and are gone
// when it stops (SIGINT or SIGTERM).
//
//	go run ./internal/gitlabstate/cmd/gitlabstate -listen 127.0.0.1:0 -env-file /tmp/state.env
//
// Once it listens it writes the env file, a shell-sourceable file with the
// variables a GitLab CI job would have: CI_API_V4_URL, CI_PROJECT_ID and
// CI_JOB_TOKEN (random unless -job-token is given). Every request is logged
// to stderr without its credentials, unless -quiet.
//
// -environments names a file of the project's environments, one a line:
// "<state> <name> [<slug>]" (the slug defaults to the name), which its
// environments API then lists.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/gitlabstate"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on; port 0 picks a free port")
	projectID := flag.String("project-id", "1", "numeric project ID the states belong to")
	projectPath := flag.String("project-path", "", "project path also accepted in URLs, e.g. my-group/my-app")
	username := flag.String("username", "gitlab-ci", "GitLab user name reported as the holder of locks")
	jobToken := flag.String("job-token", "", "CI job token to accept (user gitlab-ci-token); random when empty")
	envFile := flag.String("env-file", "", "write CI_API_V4_URL, CI_PROJECT_ID and CI_JOB_TOKEN here once listening")
	environments := flag.String("environments", "", "file of the project's environments, one \"<state> <name> [<slug>]\" a line")
	quiet := flag.Bool("quiet", false, "log no requests")
	flag.Parse()

	logger := log.New(os.Stderr, "gitlabstate: ", log.LstdFlags)
	requestLog := logger.Printf
	if *quiet {
		requestLog = func(string, ...any) {}
	}
	if err := run(logger, requestLog, *listen, *projectID, *projectPath, *username, *jobToken, *envFile, *environments); err != nil {
		logger.Fatal(err)
	}
}

func run(logger *log.Logger, requestLog func(string, ...any), listen, projectID, projectPath, username, jobToken, envFile, environments string) error {
	if jobToken == "" {
		buf := make([]byte, 16)
		if _, err := rand.Read(buf); err != nil {
			return fmt.Errorf("generate a job token: %w", err)
		}
		jobToken = hex.EncodeToString(buf)
	}
	srv := gitlabstate.New(gitlabstate.Config{
		ProjectID:   projectID,
		ProjectPath: projectPath,
		Users:       []gitlabstate.User{{Username: username, JobToken: jobToken}},
		Logf:        requestLog,
	})
	if err := putEnvironments(srv, environments); err != nil {
		return err
	}

	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", listen, err)
	}
	apiURL := "http://" + ln.Addr().String() + "/api/v4"
	if envFile != "" {
		if err := writeEnvFile(envFile, apiURL, projectID, jobToken); err != nil {
			ln.Close()
			return err
		}
	}
	logger.Printf("serving the Terraform state API of project %s at %s", projectID, apiURL)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	httpServer := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- httpServer.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := httpServer.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shut down: %w", err)
	}
	return nil
}

// putEnvironments adds the environments the file lists, if one is given.
func putEnvironments(srv *gitlabstate.Server, path string) error {
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read environments: %w", err)
	}
	for i, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if len(fields) > 3 || len(fields) < 2 {
			return fmt.Errorf("environments %s, line %d: want \"<state> <name> [<slug>]\", got %q", path, i+1, line)
		}
		slug := fields[1]
		if len(fields) == 3 {
			slug = fields[2]
		}
		if _, err := srv.PutEnvironment(fields[1], slug, fields[0]); err != nil {
			return fmt.Errorf("environments %s, line %d: %w", path, i+1, err)
		}
	}
	return nil
}

// writeEnvFile writes the file atomically, so a script polling for it never
// reads half of it; the token makes it private to the user.
func writeEnvFile(path, apiURL, projectID, jobToken string) error {
	var b strings.Builder
	for _, kv := range [][2]string{{"CI_API_V4_URL", apiURL}, {"CI_PROJECT_ID", projectID}, {"CI_JOB_TOKEN", jobToken}} {
		fmt.Fprintf(&b, "export %s='%s'\n", kv[0], strings.ReplaceAll(kv[1], "'", `'\''`))
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".gitlabstate-env-*")
	if err != nil {
		return fmt.Errorf("write env file %s: %w", path, err)
	}
	if _, err := tmp.WriteString(b.String()); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("write env file %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write env file %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write env file %s: %w", path, err)
	}
	return nil
}
