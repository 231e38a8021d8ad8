package validate

import (
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	psadmission "k8s.io/pod-security-admission/admission"
	psapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/manifest"
)

// podSecurityChecks is Pod Security admission's evaluator of its own checks, built once.
var podSecurityChecks = sync.OnceValues(func() (policy.Evaluator, error) {
	return policy.NewEvaluator(policy.DefaultChecks(), nil)
})

// PodSecurity evaluates the pods obj would have created against a Pod Security level, as the
// API server's Pod Security admission evaluates a pod or a workload's pod template: with that
// admission's own checks and its extraction of the pod template (Pod, PodTemplate,
// ReplicationController, ReplicaSet, Deployment, DaemonSet, StatefulSet, Job, CronJob), at the
// policy version a namespace's version label gives (`v1.28`), else at target's ("latest" in a
// namespace of a cluster of that version; the newest the checks know when target is zero). It
// returns what the level forbids, worded as the admission words it (`privileged (container
// "web" must not set securityContext.privileged=true)`), "" when the pods meet the level or obj
// has none, and known false for a level that is not privileged, baseline or restricted.
func PodSecurity(obj manifest.Object, level, version string, target Version) (forbidden string, known bool) {
	parsed, err := psapi.ParseLevel(level)
	if err != nil {
		return "", false
	}
	if parsed == psapi.LevelPrivileged {
		return "", true
	}
	typed, ok := podBearing(obj)
	if !ok {
		return "", true
	}
	meta, spec, err := psadmission.DefaultPodSpecExtractor{}.ExtractPodSpec(typed)
	if err != nil || meta == nil || spec == nil {
		return "", true
	}
	evaluator, err := podSecurityChecks()
	if err != nil {
		return "", false
	}
	policyVersion := psapi.LatestVersion()
	if !target.IsZero() {
		policyVersion = psapi.MajorMinorVersion(target.Major, target.Minor)
	}
	if pinned, err := psapi.ParseVersion(version); err == nil && !pinned.Latest() && pinned.Older(policyVersion) {
		policyVersion = pinned
	}
	result := policy.AggregateCheckResults(evaluator.EvaluatePod(psapi.LevelVersion{Level: parsed, Version: policyVersion}, meta, spec))
	if result.Allowed {
		return "", true
	}
	return result.ForbiddenDetail(), true
}

// podBearing converts obj to its Go type when its kind is one Pod Security admission reads a pod
// template from.
func podBearing(obj manifest.Object) (runtime.Object, bool) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, false
	}
	if !podSecurityKinds[schema.GroupKind{Group: gv.Group, Kind: kind}] {
		return nil, false
	}
	typed, err := scheme.Scheme.New(gv.WithKind(kind))
	if err != nil {
		return nil, false
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, typed); err != nil {
		return nil, false
	}
	return typed, true
}

// podSecurityKinds are the kinds whose pods Pod Security admission evaluates
// (psadmission.DefaultPodSpecExtractor's resources).
var podSecurityKinds = map[schema.GroupKind]bool{
	{Kind: "Pod"}:                        true,
	{Kind: "PodTemplate"}:                true,
	{Kind: "ReplicationController"}:      true,
	{Group: "apps", Kind: "ReplicaSet"}:  true,
	{Group: "apps", Kind: "Deployment"}:  true,
	{Group: "apps", Kind: "DaemonSet"}:   true,
	{Group: "apps", Kind: "StatefulSet"}: true,
	{Group: "batch", Kind: "Job"}:        true,
	{Group: "batch", Kind: "CronJob"}:    true,
}
