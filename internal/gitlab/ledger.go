package gitlab

import (
	"path"
	"strings"
)

// Labels of a Helm release revision that record what made it, so that
// `helm list --selector` finds a user's, a pipeline's or a merge request's
// releases. Values are sanitized into valid label values.
const (
	ReleaseLabelPipelineID      = "gitlabk8s.io/pipeline-id"
	ReleaseLabelJobID           = "gitlabk8s.io/job-id"
	ReleaseLabelCommitSHA       = "gitlabk8s.io/commit-sha"
	ReleaseLabelMergeRequestIID = "gitlabk8s.io/merge-request-iid"
	ReleaseLabelUser            = "gitlabk8s.io/user"
)

// ReleaseLabels lists the keys [LedgerLabels] returns, in documentation order.
var ReleaseLabels = []string{ReleaseLabelPipelineID, ReleaseLabelJobID, ReleaseLabelCommitSHA, ReleaseLabelMergeRequestIID, ReleaseLabelUser}

// maxLabelValue is the longest Kubernetes label value.
const maxLabelValue = 63

// LedgerLabels returns every key of [ReleaseLabels] with its value for the
// job in ci: the pipeline's and the job's IDs (the last segment of their
// URLs), the commit SHA, the merge request IID and the user's login, each a
// valid label value. A value the job does not define, or that has nothing
// valid in it, is "".
func LedgerLabels(ci CIMetadata) map[string]string {
	return map[string]string{
		ReleaseLabelPipelineID:      LabelValue(path.Base(strings.TrimRight(ci.PipelineURL, "/"))),
		ReleaseLabelJobID:           LabelValue(path.Base(strings.TrimRight(ci.JobURL, "/"))),
		ReleaseLabelCommitSHA:       LabelValue(ci.CommitSHA),
		ReleaseLabelMergeRequestIID: LabelValue(ci.MergeRequestIID),
		ReleaseLabelUser:            LabelValue(ci.UserLogin),
	}
}

// LabelValue turns s into a valid label value: every character outside
// A-Za-z0-9-_. becomes '_', the result is cut to 63 characters, and it
// starts and ends with a letter or digit. "." and "/" alone (what a missing
// URL leaves) give "".
func LabelValue(s string) string {
	if s == "." || s == "/" {
		return ""
	}
	b := []byte(s)
	for i, c := range b {
		if !isAlphanumeric(c) && c != '-' && c != '_' && c != '.' {
			b[i] = '_'
		}
	}
	if len(b) > maxLabelValue {
		b = b[:maxLabelValue]
	}
	trim := func(r rune) bool { return r < 128 && !isAlphanumeric(byte(r)) }
	return strings.TrimFunc(string(b), trim)
}

func isAlphanumeric(c byte) bool {
	return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
}

// LedgerDescription is the description of a Helm revision made by the job in
// ci, for `helm history`: who applied it, from which pipeline, job, commit
// and merge request. It is "" outside CI.
func LedgerDescription(ci CIMetadata) string {
	var where []string
	if ci.PipelineURL != "" {
		where = append(where, "in pipeline "+ci.PipelineURL)
	}
	if ci.JobURL != "" {
		where = append(where, "job "+ci.JobURL)
	}
	if ci.CommitSHA != "" {
		where = append(where, "commit "+ci.CommitSHA)
	}
	if ci.MergeRequestIID != "" {
		where = append(where, "merge request !"+ci.MergeRequestIID)
	}
	text := strings.Join(where, ", ")
	if ci.UserLogin != "" {
		text = strings.TrimSpace("by @" + ci.UserLogin + " " + text)
	}
	if text == "" {
		return ""
	}
	return "Applied " + text
}
