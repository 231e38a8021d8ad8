package front

import (
	"fmt"
	"os"
	"time"
)

// eventLog appends lines to the file LogVariable names; nothing when it names none.
type eventLog struct{ path string }

func openEventLog(path string) *eventLog { return &eventLog{path: path} }

// OpenEventLog is the engine's view of the same log.
func OpenEventLog(path string) interface{ Printf(string, ...any) } {
	return printer{openEventLog(path)}
}

type printer struct{ l *eventLog }

func (p printer) Printf(format string, args ...any) { p.l.printf(format, args...) }

// printf appends one line in one write, so processes writing at once never interleave lines.
func (l *eventLog) printf(format string, args ...any) {
	if l == nil || l.path == "" {
		return
	}
	f, err := os.OpenFile(l.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	_, _ = fmt.Fprintf(f, "%s %s\n", time.Now().UTC().Format("15:04:05.000000"), fmt.Sprintf(format, args...))
	_ = f.Close()
}
