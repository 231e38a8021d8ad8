package front

import (
	"strings"
	"testing"
)

func TestEngineBeside(t *testing.T) {
	for self, want := range map[string]string{
		"/p/terraform-provider-gitlabk8s_v0.1.0":     "/p/gitlabk8s-engine_v0.1.0",
		"/p/terraform-provider-gitlabk8s":            "/p/gitlabk8s-engine",
		"/p/terraform-provider-gitlabk8s_v1.2.3.exe": "/p/gitlabk8s-engine_v1.2.3.exe",
		"/p/renamed_v0.2.0":                          "/p/gitlabk8s-engine_v0.2.0",
		"/p/renamed":                                 "/p/gitlabk8s-engine",
	} {
		if got := EngineBeside(self); got != want {
			t.Errorf("EngineBeside(%q) = %q, want %q", self, got, want)
		}
	}
	// Terraform takes for the provider's executable a file named terraform-provider-gitlabk8s
	// followed by nothing, "_" or ".": the engine must never be one.
	for _, v := range []string{"", "_v0.1.0", ".exe"} {
		if got := EngineBeside("/p/" + frontPrefix + v); strings.HasPrefix(got, "/p/"+frontPrefix) {
			t.Errorf("the engine %q could be taken for the provider", got)
		}
	}
}

func TestDirectReason(t *testing.T) {
	terraform := map[string]string{"TF_PLUGIN_MAGIC_COOKIE": "x"}
	env := func(extra map[string]string) func(string) string {
		return func(k string) string {
			if v, ok := extra[k]; ok {
				return v
			}
			return terraform[k]
		}
	}
	if r := DirectReason([]string{"front"}, env(nil)); r != "" {
		t.Fatalf("a start by Terraform without logging shares the engine; got %q", r)
	}
	for name, tc := range map[string]struct {
		args []string
		env  map[string]string
		want string
	}{
		"report mode":      {args: []string{"front", "report"}, want: "arguments"},
		"TF_LOG":           {env: map[string]string{"TF_LOG": "debug"}, want: "TF_LOG"},
		"TF_LOG_PROVIDER":  {env: map[string]string{"TF_LOG_PROVIDER": "trace"}, want: "TF_LOG_PROVIDER"},
		"opt-out 0":        {env: map[string]string{OptOut: "0"}, want: OptOut},
		"opt-out false":    {env: map[string]string{OptOut: "False"}, want: OptOut},
		"not by Terraform": {env: map[string]string{"TF_PLUGIN_MAGIC_COOKIE": ""}, want: "Terraform"},
	} {
		args := tc.args
		if args == nil {
			args = []string{"front"}
		}
		if r := DirectReason(args, env(tc.env)); !strings.Contains(r, tc.want) {
			t.Errorf("%s: DirectReason = %q, want it to mention %q", name, r, tc.want)
		}
	}
	if r := DirectReason([]string{"front"}, env(map[string]string{OptOut: "1"})); r != "" {
		t.Errorf("%s=1 keeps sharing on; got %q", OptOut, r)
	}
}

func TestStartTime(t *testing.T) {
	// A command name with spaces and parentheses, as /proc shows one.
	stat := "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 1000 0 0 0 5 3 0 0 20 0 12 0 987654 1000000 500"
	got, err := StartTime(stat)
	if err != nil || got != "987654" {
		t.Fatalf("StartTime = %q, %v; want 987654", got, err)
	}
	for _, bad := range []string{"4242 no name", "4242 (x) S 1 2", "4242 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 -1 1"} {
		if got, err := StartTime(bad); err == nil {
			t.Errorf("StartTime(%q) = %q, want an error", bad, got)
		}
	}
}

func TestOwnerNames(t *testing.T) {
	owner := Owner(4242, "987654")
	pid, start, err := OwnerPID(owner)
	if err != nil || pid != 4242 || start != "987654" {
		t.Fatalf("OwnerPID(%q) = %d, %q, %v", owner, pid, start, err)
	}
	files, err := FilesIn("/tmp/d", owner, EngineID("/p/e", 10, 20))
	if err != nil {
		t.Fatal(err)
	}
	if FilesOf(files.Socket) != files {
		t.Errorf("FilesOf(%q) = %+v, want %+v: the engine finds its files from the socket alone", files.Socket, FilesOf(files.Socket), files)
	}
	for _, p := range []string{files.Socket, files.Lock, files.Err} {
		if got := OwnerOf(p[len("/tmp/d/"):]); got != owner {
			t.Errorf("OwnerOf(%q) = %q, want %q", p, got, owner)
		}
	}
	for _, other := range []string{"notes.txt", "1-2.sock", "a-2-e.sock", "1-2-e-f.sock"} {
		if got := OwnerOf(other); got != "" {
			t.Errorf("OwnerOf(%q) = %q, want none", other, got)
		}
	}
	if _, _, err := OwnerPID("x-1"); err == nil {
		t.Error("OwnerPID accepted a name that is not a PID")
	}
	if EngineID("/p/e", 10, 20) == EngineID("/p/e", 10, 21) || EngineID("/p/e", 10, 20) == EngineID("/q/e", 10, 20) {
		t.Error("EngineID does not tell two engine files apart")
	}
	if _, err := FilesIn("/"+strings.Repeat("d", 100), owner, "abc"); err == nil {
		t.Error("FilesIn accepted a socket path too long to bind")
	}
}

func TestDirMode(t *testing.T) {
	if err := DirMode(true, false, 1000, 1000, 0o700); err != nil {
		t.Fatalf("the user's own private folder refused: %v", err)
	}
	for name, err := range map[string]error{
		"link":          DirMode(true, true, 1000, 1000, 0o700),
		"file":          DirMode(false, false, 1000, 1000, 0o600),
		"another owner": DirMode(true, false, 0, 1000, 0o700),
		"group access":  DirMode(true, false, 1000, 1000, 0o750),
		"world access":  DirMode(true, false, 1000, 1000, 0o707),
	} {
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestCrashReport(t *testing.T) {
	// A panic's own output: Terraform shows it from its "panic: " line.
	got := CrashReport("/p/e", ":\npanic: boom\n\ngoroutine 1 [running]:")
	if strings.HasPrefix(got, "panic: ") || !strings.Contains(got, "\npanic: boom") {
		t.Errorf("a panic's report = %q", got)
	}
	// A death without one gets the heading Terraform shows, naming the engine.
	for _, text := range []string{"", ":\nSIGQUIT: quit\nPC=0x0"} {
		got := CrashReport("/p/e", text)
		if !strings.HasPrefix(got, "panic: the connection to the provider's engine /p/e was lost") || !strings.Contains(got, strings.TrimPrefix(text, ":\n")) {
			t.Errorf("CrashReport(%q) = %q", text, got)
		}
	}
}
