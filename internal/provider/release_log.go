package provider

import (
	"context"
	"sync/atomic"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/helmrelease"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/readiness"
)

// releaseLog logs for one release with its sensitive values, and what a rendering derived from
// them, redacted.
//
// It redacts by itself rather than with tflog's masks: a masked context rewrites its field
// map on every log call (terraform-plugin-log#246), so logging with it from Helm's goroutines
// (parallel deletes, waits) is a concurrent map write that crashes the provider. The context
// here carries no masks; tflog only reads it, which is safe from any goroutine.
//
// Its redactor is the release model's (redactorFor): once the release is rendered, it hides
// what the rendering derived from the sensitive values too, in Helm's messages of the apply.
type releaseLog struct {
	ctx      context.Context
	id       string
	redactor *atomic.Pointer[manifest.Redactor]
}

func newReleaseLog(ctx context.Context, m *releaseModel) *releaseLog {
	return &releaseLog{ctx: ctx, id: m.releaseID(), redactor: m.redactorCell()}
}

func (l *releaseLog) debug(msg string, fields map[string]any) {
	tflog.Debug(l.ctx, l.redact(msg), l.redactFields(fields))
}

func (l *releaseLog) info(msg string, fields map[string]any) {
	tflog.Info(l.ctx, l.redact(msg), l.redactFields(fields))
}

func (l *releaseLog) redact(s string) string {
	return l.redactor.Load().String(s)
}

// redactFields returns a redacted copy of fields, always with the release's id.
func (l *releaseLog) redactFields(fields map[string]any) map[string]any {
	out := make(map[string]any, len(fields)+1)
	for k, v := range fields {
		if s, ok := v.(string); ok {
			v = l.redact(s)
		}
		out[k] = v
	}
	out["release"] = l.id
	return out
}

// helmOptions sends Helm's debug messages and the waits' progress to l. Helm calls them from
// several goroutines at once.
func (l *releaseLog) helmOptions() helmrelease.Options {
	return helmrelease.Options{
		Log: func(msg string) { l.debug(msg, nil) },
		Progress: func(summary string, objects []readiness.Progress) {
			l.info("release "+l.id+": waiting: "+summary, map[string]any{"pending": len(objects)})
		},
	}
}
