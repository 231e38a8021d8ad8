package gitlab

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

var ledgerJob = CIMetadata{
	PipelineURL:     "https://gitlab.example.com/group/app/-/pipelines/4711",
	JobURL:          "https://gitlab.example.com/group/app/-/jobs/815",
	CommitSHA:       "0123456789abcdef0123456789abcdef01234567",
	MergeRequestIID: "17",
	UserLogin:       "alice.smith",
}

func TestLedgerLabels_recordTheJobInValidLabelValues(t *testing.T) {
	got := LedgerLabels(ledgerJob)
	want := map[string]string{
		ReleaseLabelPipelineID:      "4711",
		ReleaseLabelJobID:           "815",
		ReleaseLabelCommitSHA:       ledgerJob.CommitSHA,
		ReleaseLabelMergeRequestIID: "17",
		ReleaseLabelUser:            "alice.smith",
	}
	for _, key := range ReleaseLabels {
		if got[key] != want[key] {
			t.Errorf("%s = %q, want %q", key, got[key], want[key])
		}
	}
	if len(got) != len(ReleaseLabels) {
		t.Errorf("LedgerLabels has %d keys, want the %d of ReleaseLabels", len(got), len(ReleaseLabels))
	}
	// Outside CI every key is there, empty, so a caller can clear what an earlier job recorded.
	for key, value := range LedgerLabels(CIMetadata{}) {
		if value != "" {
			t.Errorf("outside CI %s = %q, want empty", key, value)
		}
	}
}

func TestLabelValue_isAlwaysAValidLabelValue(t *testing.T) {
	tests := map[string]string{
		"alice":                        "alice",
		"_bob-":                        "bob",
		"jörg":                         "j__rg",
		"user@example.com":             "user_example.com",
		strings.Repeat("a", 70):        strings.Repeat("a", 63),
		strings.Repeat("a", 62) + "-b": strings.Repeat("a", 62),
		"":                             "",
		".":                            "",
		"---":                          "",
	}
	for in, want := range tests {
		got := LabelValue(in)
		if got != want {
			t.Errorf("LabelValue(%q) = %q, want %q", in, got, want)
		}
		if errs := validation.IsValidLabelValue(got); len(errs) > 0 {
			t.Errorf("LabelValue(%q) = %q is not a valid label value: %v", in, got, errs)
		}
	}
}

func TestLedgerDescription_saysWhoAndWhereFrom(t *testing.T) {
	got := LedgerDescription(ledgerJob)
	want := "Applied by @alice.smith in pipeline https://gitlab.example.com/group/app/-/pipelines/4711, job https://gitlab.example.com/group/app/-/jobs/815, " +
		"commit 0123456789abcdef0123456789abcdef01234567, merge request !17"
	if got != want {
		t.Errorf("LedgerDescription =\n%q\nwant\n%q", got, want)
	}
	if got := LedgerDescription(CIMetadata{}); got != "" {
		t.Errorf("outside CI LedgerDescription = %q, want empty", got)
	}
}
