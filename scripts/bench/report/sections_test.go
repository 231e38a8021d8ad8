package main

import "testing"

func TestWithSection_addsThenReplacesInPlace(t *testing.T) {
	report := "# Benchmarks\n\nfigures\n"
	added := withSection(report, "load", "## Load\n\nfirst run\n")
	want := "# Benchmarks\n\nfigures\n\n<!-- section:load -->\n## Load\n\nfirst run\n<!-- /section:load -->\n"
	if added != want {
		t.Fatalf("added:\n%s\nwant:\n%s", added, want)
	}
	withSweep := withSection(added, "sweep", "## Sweep\n")
	replaced := withSection(withSweep, "load", "## Load\n\nsecond run\n")
	want = "# Benchmarks\n\nfigures\n\n<!-- section:load -->\n## Load\n\nsecond run\n<!-- /section:load -->\n\n" +
		"<!-- section:sweep -->\n## Sweep\n<!-- /section:sweep -->\n"
	if replaced != want {
		t.Fatalf("replaced:\n%s\nwant:\n%s", replaced, want)
	}
}

func TestSectionsOf_keepsEverySectionAndNothingElse(t *testing.T) {
	report := "# Benchmarks\n\n<!-- section:load -->\nL\n<!-- /section:load -->\nbetween\n<!-- section:sweep -->\nS\n<!-- /section:sweep -->\n"
	got := sectionsOf(report)
	if len(got) != 2 || got[0] != "<!-- section:load -->\nL\n<!-- /section:load -->\n" || got[1] != "<!-- section:sweep -->\nS\n<!-- /section:sweep -->\n" {
		t.Fatalf("sections: %q", got)
	}
}
