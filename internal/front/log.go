package front

import (
	"fmt"
	"os"
	"time"
)

// EventLog appends lines to the file LogVariable names; nothing when it names none. The front and
// the engine write to the same one.
type EventLog struct{ path string }

// OpenEventLog returns the log at path ("" for none).
func OpenEventLog(path string) *EventLog { return &EventLog{path: path} }

// Printf appends one line in one write, so processes writing at once never interleave lines.
func (l *EventLog) Printf(format string, args ...any) {
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
