package provider

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	"github.com/hashicorp/terraform-plugin-log/tflogtest"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/e2e"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/readiness"
)

// sensitiveReleaseModel is a release whose password is set_sensitive, with its redactor cell
// made as readRelease makes it.
func sensitiveReleaseModel(password string) *releaseModel {
	m := &releaseModel{
		Name: types.StringValue("web"), Namespace: types.StringValue("review-x"),
		SetSensitive: types.MapValueMust(types.StringType, map[string]attr.Value{"db.password": types.StringValue(password)}),
	}
	m.redactor = newRedactorCell(m)
	return m
}

// Helm deletes and waits from several goroutines and logs from each; a uninstall of a large
// release once crashed the provider with "concurrent map iteration and map write" in tflog's
// masking. Run with -race: this fails there when the release log goes through a masked context.
func TestReleaseLog_helmLogsFromManyGoroutines(t *testing.T) {
	const password = "p&ss w/rd+100%"
	out := &e2e.SyncBuffer{}
	ctx := tflogtest.RootLogger(context.Background(), out)
	// The framework's request context carries fields, which masking rewrites on each call.
	ctx = tflog.SetField(ctx, "tf_req_id", "1")
	ctx = tflog.SetField(ctx, "tf_resource_type", "gitlabk8s_release")

	m := sensitiveReleaseModel(password)
	opts := newReleaseLog(ctx, m).helmOptions()
	var wg sync.WaitGroup
	// A rendering replaces the release's redactor while Helm's goroutines log.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 200 {
			m.redactorCell().Store(manifest.NewRedactor([]string{password}, nil, nil))
		}
	}()
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				opts.Log("Starting delete for \"cm-" + string(rune('a'+i%26)) + "\" ConfigMap: password=" + password)
				opts.Progress("ConfigMap/cm waits for "+password, []readiness.Progress{{Object: "ConfigMap/cm"}})
			}
		}()
	}
	wg.Wait()

	entries, err := tflogtest.MultilineJSONDecode(strings.NewReader(out.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2*64*20 {
		t.Fatalf("logged %d messages, want %d", len(entries), 2*64*20)
	}
	for _, entry := range entries {
		// Decoded, so JSON's escapes (& as \u0026) cannot hide the value from the check.
		if text := fmt.Sprint(entry); strings.Contains(text, password) {
			t.Fatalf("a log entry holds the sensitive value: %s", text)
		}
		if entry["release"] != "review-x/web" {
			t.Fatalf("a log entry does not name the release: %v", entry)
		}
	}
}
