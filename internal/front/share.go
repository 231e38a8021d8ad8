// Package front is the provider binary Terraform starts on Linux in a released package: a small
// program that passes Terraform's calls on, as they are, to one engine shared by the provider
// processes of a Terraform command. The engine is the full provider (the repository's main
// package, internal/enginehost), shipped beside the front as gitlabk8s-engine_v<version>.
// Terraform starts the provider three times for a plan and four times for an apply; with the
// front, the full provider initializes once per command, and the first process, which only asks
// for the schema, is answered by the front from the answer it carries (schema.go).
//
// This file holds the decisions, free of I/O: the engine's name, when the engine runs directly
// instead, and the names of a command's files.
package front

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// frontPrefix is the start of the front's file name; the registries ship it as
// terraform-provider-gitlabk8s_v<version>.
const frontPrefix = "terraform-provider-gitlabk8s"

// enginePrefix is the start of the engine's file name. Terraform takes for the provider's
// executable the file whose name starts with "terraform-provider-gitlabk8s" followed by nothing,
// "_" or ".", so the engine's name must not.
const enginePrefix = "gitlabk8s-engine"

// OptOut is the variable that, set to 0 or false, runs the engine directly in every provider
// process, as a provider without a front runs.
const OptOut = "GITLABK8S_SHARED_ENGINE"

// LogVariable names a file the front and the engine append a line to for each start, connection
// and decision: which processes one engine served, and why a front ran the engine directly.
const LogVariable = "GITLABK8S_ENGINE_LOG"

// EngineBeside returns the path of the engine shipped beside the front at self: the front's name
// with "terraform-provider-gitlabk8s" replaced by "gitlabk8s-engine" (the registry's version
// suffix "_v1.2.3" kept).
func EngineBeside(self string) string {
	base := filepath.Base(self)
	rest, ok := strings.CutPrefix(base, frontPrefix)
	if !ok {
		// A front renamed by hand: the engine beside it keeps the suffix after the first "_".
		if i := strings.Index(base, "_"); i >= 0 {
			rest = base[i:]
		} else {
			rest = ""
		}
	}
	return filepath.Join(filepath.Dir(self), enginePrefix+rest)
}

// DirectReason says why the engine must run directly in this process, or "" when the process
// can share the command's engine: arguments (the report mode, -debug), Terraform's logging
// variables (the provider's logs go to its own standard error, which Terraform reads from the
// process it started), or the opt-out variable.
func DirectReason(args []string, getenv func(string) string) string {
	if len(args) > 1 {
		return "started with arguments"
	}
	for _, v := range []string{"TF_LOG", "TF_LOG_PROVIDER", "TF_LOG_PROVIDER_GITLABK8S"} {
		if getenv(v) != "" {
			return v + " is set: the provider's logs go to the process Terraform started"
		}
	}
	switch strings.ToLower(getenv(OptOut)) {
	case "0", "false", "no", "off":
		return OptOut + " turns sharing off"
	}
	if getenv("TF_PLUGIN_MAGIC_COOKIE") == "" {
		return "not started by Terraform"
	}
	return ""
}

// StartTime reads a process's start time (in clock ticks after boot) from the text of
// /proc/<pid>/stat: the 22nd field, counted after the command name, which is in parentheses and
// may itself hold spaces and parentheses. With the PID it names a process for good: a PID alone
// is reused once the process is gone.
func StartTime(stat string) (string, error) {
	end := strings.LastIndexByte(stat, ')')
	if end < 0 {
		return "", errors.New("no command name in /proc/<pid>/stat")
	}
	// After ") " come the fields from the third (state) on; the start time is the 22nd.
	fields := strings.Fields(stat[end+1:])
	const startTimeAfterName = 22 - 3
	if len(fields) <= startTimeAfterName {
		return "", fmt.Errorf("/proc/<pid>/stat has %d fields after the command name, want more than %d", len(fields), startTimeAfterName)
	}
	t := fields[startTimeAfterName]
	if _, err := strconv.ParseUint(t, 10, 64); err != nil {
		return "", fmt.Errorf("/proc/<pid>/stat's start time %q: %w", t, err)
	}
	return t, nil
}

// Owner names the Terraform process a command's engine serves: "<pid>-<start time>".
func Owner(pid int, startTime string) string {
	return strconv.Itoa(pid) + "-" + startTime
}

// OwnerPID returns the PID of an owner name.
func OwnerPID(owner string) (int, string, error) {
	pid, start, ok := strings.Cut(owner, "-")
	if !ok {
		return 0, "", fmt.Errorf("owner %q is not <pid>-<start time>", owner)
	}
	n, err := strconv.Atoi(pid)
	if err != nil || n <= 0 {
		return 0, "", fmt.Errorf("owner %q is not <pid>-<start time>", owner)
	}
	return n, start, nil
}

// EngineID tells engines apart by their file: its path, size and modification time, hashed. Two
// versions of the provider in one command (from two registries) get engines of their own.
func EngineID(path string, size int64, modNanos int64) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d\x00%d", path, size, modNanos)))
	return hex.EncodeToString(sum[:6])
}

// Files are the paths one command's engine uses in the socket folder.
type Files struct {
	// Socket is where the engine listens.
	Socket string
	// Lock serializes starting and stopping the engine.
	Lock string
	// Err receives the engine's standard error: a crash's output, which the front shows.
	Err string
}

// maxSocketPath is the longest path a Unix socket can be bound at (sun_path, less its NUL).
const maxSocketPath = 107

// FilesIn names a command's files in dir; an error when the socket's path is too long to bind.
func FilesIn(dir, owner, engineID string) (Files, error) {
	f := FilesOf(filepath.Join(dir, owner+"-"+engineID+".sock"))
	if len(f.Socket) > maxSocketPath {
		return Files{}, fmt.Errorf("the socket path %s is longer than %d bytes", f.Socket, maxSocketPath)
	}
	return f, nil
}

// FilesOf returns the files of the command whose engine listens at socket: the lock and the
// standard error beside it.
func FilesOf(socket string) Files {
	base := strings.TrimSuffix(socket, ".sock")
	return Files{Socket: socket, Lock: base + ".lock", Err: base + ".err"}
}

// OwnerOf returns the owner part of a file name FilesIn gave ("<pid>-<start>-<engine>.<ext>"),
// or "" for any other name.
func OwnerOf(name string) string {
	stem := strings.TrimSuffix(name, filepath.Ext(name))
	parts := strings.Split(stem, "-")
	if len(parts) != 3 {
		return ""
	}
	for _, p := range parts[:2] {
		if _, err := strconv.ParseUint(p, 10, 64); err != nil {
			return ""
		}
	}
	return parts[0] + "-" + parts[1]
}

// SocketDirName is the folder, under the temporary folder, of one user's engines.
func SocketDirName(uid int) string {
	return fmt.Sprintf("gitlabk8s-engine-%d", uid)
}

// DirMode says whether a folder found at the socket folder's path may be used: a directory, not
// a link, owned by the user, with no permission for anyone else. Another user able to create it
// first must not be able to put a socket of theirs where a front connects.
func DirMode(isDir, isLink bool, ownerUID, uid int, perm uint32) error {
	switch {
	case isLink:
		return errors.New("is a symbolic link")
	case !isDir:
		return errors.New("is not a directory")
	case ownerUID != uid:
		return fmt.Errorf("is owned by user %d, not %d", ownerUID, uid)
	case perm&0o077 != 0:
		return fmt.Errorf("has mode %#o; only its owner may have access", perm)
	}
	return nil
}

// MaxMessage is the largest message passed either way, front to engine and engine to Terraform,
// as the provider's own server (tf6server) allows.
const MaxMessage = 256 << 20

// Hooks let a build of the front (the bench's) run code of its own before the process exits.
type Hooks struct {
	// AtExit runs once, before the front exits on its own.
	AtExit func()
}

// The variables a front starts the engine with.
const (
	// EnvSocket is the socket the engine listens on.
	EnvSocket = "GITLABK8S_ENGINE_SOCKET"
	// EnvLockFD is the descriptor of the lock the starting front handed over, held until the
	// engine listens.
	EnvLockFD = "GITLABK8S_ENGINE_LOCK_FD"
	// EnvOwner names the Terraform process the engine serves (Owner).
	EnvOwner = "GITLABK8S_ENGINE_OWNER"
)

// CrashReport is what a front writes to its standard error when its engine's connection is lost
// (text: what the engine wrote to its own, introduced by crashText). Terraform shows a plugin's
// output from a line starting "panic: " or "fatal error: " on, as a crash's; an engine that died
// without one (a signal, the kernel's out-of-memory killer) still gets that heading, so that the
// user sees why the provider stopped.
func CrashReport(engine, text string) string {
	report := fmt.Sprintf("the connection to the provider's engine %s was lost", engine)
	if text == "" {
		text = ": the engine stopped without output"
	}
	if !strings.Contains(text, "panic: ") && !strings.Contains(text, "fatal error: ") {
		report = "panic: " + report
	}
	return report + text
}
