package helmrelease

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
)

// helmLog is the slog handler Helm 4 logs to for this client: each record becomes one line
// of Options.Log, its attributes written as key=value with their values as they are, never
// quoted or escaped, so the caller's redactor finds a sensitive value in whatever form Helm
// puts it. Nothing reaches slog's default logger.
func (c *Client) helmLog() slog.Handler {
	if c.opts.Log == nil {
		return slog.DiscardHandler
	}
	return &lineHandler{log: c.opts.Log}
}

// lineHandler is a slog.Handler that writes records as lines to a function.
type lineHandler struct {
	log    func(msg string)
	attrs  []string // "group.key=value", from WithAttrs
	groups []string // from WithGroup
}

func (h *lineHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *lineHandler) Handle(_ context.Context, r slog.Record) error {
	var line strings.Builder
	line.WriteString(r.Message)
	for _, attr := range h.attrs {
		line.WriteString(" " + attr)
	}
	r.Attrs(func(a slog.Attr) bool {
		h.writeAttr(&line, h.groups, a)
		return true
	})
	if r.Level != slog.LevelDebug && r.Level != slog.LevelInfo {
		h.log(r.Level.String() + " " + line.String())
		return nil
	}
	h.log(line.String())
	return nil
}

// writeAttr writes a as " key=value", a group's attributes each under its name.
func (h *lineHandler) writeAttr(line *strings.Builder, groups []string, a slog.Attr) {
	value := a.Value.Resolve()
	if value.Kind() == slog.KindGroup {
		inner := groups
		if a.Key != "" {
			inner = append(slices.Clone(groups), a.Key)
		}
		for _, member := range value.Group() {
			h.writeAttr(line, inner, member)
		}
		return
	}
	if a.Equal(slog.Attr{}) {
		return
	}
	key := strings.Join(append(slices.Clone(groups), a.Key), ".")
	fmt.Fprintf(line, " %s=%v", key, value.Any())
}

func (h *lineHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	out := &lineHandler{log: h.log, attrs: slices.Clone(h.attrs), groups: h.groups}
	for _, a := range attrs {
		var line strings.Builder
		h.writeAttr(&line, h.groups, a)
		if line.Len() > 0 {
			out.attrs = append(out.attrs, strings.TrimPrefix(line.String(), " "))
		}
	}
	return out
}

func (h *lineHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return &lineHandler{log: h.log, attrs: h.attrs, groups: append(slices.Clone(h.groups), name)}
}

var discardDefaultLogs sync.Once

// DiscardDefaultLogs makes slog's default logger, and with it the standard log package,
// discard everything, once per process. Helm 4 logs part of what it does there rather than to
// the logger it is given (the template engine's lookups, a chart's dependency conditions, the
// manifest sorter, a hook's failed cleanup with log.Printf), with no release to tell whose
// values to hide; such a line would reach the provider's log unredacted.
func DiscardDefaultLogs() {
	discardDefaultLogs.Do(func() {
		slog.SetDefault(slog.New(slog.DiscardHandler))
	})
}
