package helmrelease

import (
	"bytes"
	"context"
	"log"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/kube"
)

// capturedLines collects what a log function, or a test double that records what it is asked,
// receives, from any goroutine.
type capturedLines struct {
	mu    sync.Mutex
	lines []string
}

func (c *capturedLines) log(msg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lines = append(c.lines, msg)
}

func (c *capturedLines) all() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.lines)
}

// take returns, sorted, what was collected since the last take.
func (c *capturedLines) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.lines
	c.lines = nil
	slices.Sort(out)
	return out
}

func (c *capturedLines) contain(want string) bool {
	return slices.ContainsFunc(c.all(), func(line string) bool { return strings.Contains(line, want) })
}

// Every part of Helm an action configuration holds logs to the client's log, never to slog's
// default logger; the lines Helm writes while reading a release arrive there.
func TestConfiguration_helmLogsToTheClientsLog(t *testing.T) {
	var defaults capturedLines
	previous := slog.Default()
	slog.SetDefault(slog.New(&lineHandler{log: defaults.log}))
	t.Cleanup(func() { slog.SetDefault(previous) })

	var lines capturedLines
	c := New(&kube.Clients{Config: &rest.Config{}, Kubernetes: fake.NewClientset()}, Options{Log: lines.log})
	cfg := c.configuration(context.Background(), testNamespace, nil)
	loggers := map[string]*slog.Logger{
		"configuration": cfg.Logger(),
		"kube client":   cfg.KubeClient.(*contextKubeClient).Client.Logger(),
		"storage":       cfg.Releases.Logger(),
		"driver":        cfg.Releases.Driver.(interface{ Logger() *slog.Logger }).Logger(),
	}
	for part, logger := range loggers {
		logger.Debug("probe from the " + part)
	}
	if history, err := c.History(context.Background(), testNamespace, "app", 0); err != nil || len(history.Revisions) != 0 {
		t.Fatalf("History = %v, %v, want none", history, err)
	}
	for part := range loggers {
		if !lines.contain("probe from the " + part) {
			t.Errorf("the %s's line did not reach the client's log: %q", part, lines.all())
		}
	}
	if !lines.contain("getting release history name=app") {
		t.Errorf("the storage's debug line of reading the history did not reach the client's log: %q", lines.all())
	}
	if got := defaults.all(); len(got) > 0 {
		t.Errorf("Helm logged to slog's default logger: %q", got)
	}
}

// A record's values reach the log as they are, so the caller's redactor finds them: never
// quoted or escaped, whatever they hold.
func TestLineHandler_valuesAsTheyAre(t *testing.T) {
	var lines capturedLines
	secret := "pa\"ss\nwo rd"
	logger := slog.New(&lineHandler{log: lines.log}).With("release", "app").WithGroup("patch")
	logger.Warn("patching failed", "error", secret, slog.Group("target", "name", "web"))
	got := lines.all()
	want := `WARN patching failed release=app patch.error=` + secret + ` patch.target.name=web`
	if len(got) != 1 || got[0] != want {
		t.Errorf("lines = %q, want %q", got, want)
	}
}

// What Helm logs to slog's default logger or the standard log package, with no release to
// redact it for, goes nowhere once the provider has discarded them.
func TestDiscardDefaultLogs(t *testing.T) {
	var out bytes.Buffer
	previousSlog, previousOutput := slog.Default(), log.Writer()
	log.SetOutput(&out)
	t.Cleanup(func() {
		slog.SetDefault(previousSlog)
		log.SetOutput(previousOutput)
	})
	DiscardDefaultLogs()
	// Helm's manifest sorter logs a hook of an unknown event to slog's default logger.
	files := map[string]string{"web/templates/hook.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: h\n  annotations:\n    helm.sh/hook: test-failure\n"}
	if _, _, err := releaseutil.SortManifests(files, nil, releaseutil.InstallOrder); err != nil {
		t.Fatal(err)
	}
	slog.Error("a line for the default logger")
	log.Printf("a line for the log package")
	if out.Len() > 0 {
		t.Errorf("default logs reached the output:\n%s", out.String())
	}
}
