package environment

import (
	"strings"
	"testing"
)

func TestValidate_badInputIsReportedOnItsAttribute(t *testing.T) {
	long := strings.Repeat("a", 64)
	tests := []struct {
		desc     string
		spec     Spec
		path     string
		contains string
	}{
		{"invalid environment name", Spec{Name: "review@x"}, "name", "contains '@'"},
		{"empty environment name", Spec{Name: ""}, "name", "must not be empty"},
		{"namespace not a DNS label", Spec{Name: "a", Namespace: "Review_X"}, "namespace", "contains 'R'"},
		{"namespace too long", Spec{Name: "a", Namespace: long}, "namespace", "64 characters long"},
		{"protected namespace", Spec{Name: "a", Namespace: "kube-system"}, "namespace", "can never create, adopt or delete it"},
		{"quantity with words", Spec{Name: "a", ResourceQuota: map[string]string{"requests.cpu": "2 cpus"}}, `resource_quota["requests.cpu"]`, `"2 cpus" is not a quantity`},
		{"negative quantity", Spec{Name: "a", ResourceQuota: map[string]string{"limits.memory": "-1Gi"}}, `resource_quota["limits.memory"]`, "negative"},
		{"unknown quota resource", Spec{Name: "a", ResourceQuota: map[string]string{"request.cpu": "1"}}, `resource_quota["request.cpu"]`, "is not a ResourceQuota resource name"},
		{"fractional object count", Spec{Name: "a", ResourceQuota: map[string]string{"pods": "1.5"}}, `resource_quota["pods"]`, "whole number"},
		{"service account disabled but named", Spec{Name: "a", ServiceAccount: ServiceAccountSpec{Enabled: ptr(false), Name: ptr("x")}}, "service_account.name", "enabled is false"},
		{"service account disabled with rules", Spec{Name: "a", ServiceAccount: ServiceAccountSpec{Enabled: ptr(false), Rules: DefaultRules()}}, "service_account.rules", "enabled is false"},
		{"empty rules", Spec{Name: "a", ServiceAccount: ServiceAccountSpec{Rules: []Rule{}}}, "service_account.rules", "no rights at all"},
		{"unknown verb", Spec{Name: "a", ServiceAccount: ServiceAccountSpec{Rules: []Rule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "destroy"}}}}}, "service_account.rules[0].verbs[1]", `"destroy" is not an RBAC verb`},
		{"bad service account name", Spec{Name: "a", ServiceAccount: ServiceAccountSpec{Name: ptr("Deploy")}}, "service_account.name", "not a valid ServiceAccount name"},
		{"network policy disabled with allowances", Spec{Name: "a", NetworkPolicy: NetworkPolicySpec{Enabled: ptr(false), AllowFromNamespaces: []string{"ingress-nginx"}}}, "network_policy.allow_from_namespaces", "enabled is false"},
		{"allowed namespace invalid", Spec{Name: "a", NetworkPolicy: NetworkPolicySpec{AllowFromNamespaces: []string{"Ingress"}}}, "network_policy.allow_from_namespaces", "contains 'I'"},
		{"label set by the provider", Spec{Name: "a", Labels: map[string]string{"app.kubernetes.io/managed-by": "me"}}, `labels["app.kubernetes.io/managed-by"]`, "set by the provider"},
		{"invalid label value", Spec{Name: "a", Labels: map[string]string{"team": "pay ments"}}, `labels["team"]`, "not a valid value"},
		{"annotation set by the provider", Spec{Name: "a", Annotations: map[string]string{"gitlabk8s.io/environment": "x"}}, `annotations["gitlabk8s.io/environment"]`, "set by the provider"},
		{"empty limit range", Spec{Name: "a", LimitRange: &LimitRangeSpec{}}, "limit_range", "sets no values"},
		{"limit range resource", Spec{Name: "a", LimitRange: &LimitRangeSpec{Max: map[string]string{"pods": "1"}}}, `limit_range.max["pods"]`, "not a container resource"},
		{"limit range quantity", Spec{Name: "a", LimitRange: &LimitRangeSpec{Default: map[string]string{"cpu": "lots"}}}, `limit_range.default["cpu"]`, "is not a quantity"},
		{"request above limit", Spec{Name: "a", LimitRange: &LimitRangeSpec{Default: map[string]string{"cpu": "500m"}, DefaultRequest: map[string]string{"cpu": "1"}}}, `limit_range.default_request["cpu"]`, "default request (1, from limit_range.default_request) is greater than the default limit (500m"},
		{"request above max via defaulting", Spec{Name: "a", LimitRange: &LimitRangeSpec{Max: map[string]string{"memory": "1Gi"}, DefaultRequest: map[string]string{"memory": "2Gi"}}}, `limit_range.default_request["memory"]`, "greater than the max"},
		{"min above max", Spec{Name: "a", LimitRange: &LimitRangeSpec{Max: map[string]string{"cpu": "1"}, Min: map[string]string{"cpu": "2"}}}, `limit_range.min["cpu"]`, "min (2, from limit_range.min) is greater than the max (1"},
		{"ratio below one", Spec{Name: "a", LimitRange: &LimitRangeSpec{MaxLimitRequestRatio: map[string]string{"cpu": "0.5"}}}, `limit_range.max_limit_request_ratio["cpu"]`, "at least 1"},
		{"ratio above max/min", Spec{Name: "a", LimitRange: &LimitRangeSpec{Max: map[string]string{"cpu": "2"}, Min: map[string]string{"cpu": "1"}, MaxLimitRequestRatio: map[string]string{"cpu": "4"}}}, `limit_range.max_limit_request_ratio["cpu"]`, "greater than max/min = 2"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			problems := Validate(tt.spec)
			if len(problems) != 1 {
				t.Fatalf("Validate = %v, want exactly one problem", problems)
			}
			if got := problems[0].Path.String(); got != tt.path {
				t.Errorf("path = %s, want %s", got, tt.path)
			}
			if !strings.Contains(problems[0].Detail, tt.contains) {
				t.Errorf("detail %q does not contain %q", problems[0].Detail, tt.contains)
			}
			if _, buildProblems := Build(tt.spec, reviewJob); len(buildProblems) == 0 {
				t.Errorf("Build accepted a spec Validate rejects")
			}
		})
	}
}

func TestValidate_goodInputPasses(t *testing.T) {
	specs := []Spec{
		{Name: "review/feature-x"},
		{Name: "production", Namespace: "shop-production", Labels: map[string]string{"team": "payments", "example.com/tier": "gold"}},
		{Name: "a", ServiceAccount: ServiceAccountSpec{Enabled: ptr(true), Name: ptr("ci.deployer")}},
		{Name: "a", NetworkPolicy: NetworkPolicySpec{Enabled: ptr(true), AllowFromNamespaces: []string{"ingress-nginx"}}},
		{Name: "a", LimitRange: &LimitRangeSpec{Min: map[string]string{"cpu": "10m"}, DefaultRequest: map[string]string{"cpu": "100m"}, Default: map[string]string{"cpu": "1"}, Max: map[string]string{"cpu": "2"}, MaxLimitRequestRatio: map[string]string{"cpu": "10"}}},
	}
	for _, spec := range specs {
		if problems := Validate(spec); len(problems) > 0 {
			t.Errorf("Validate(%+v) = %v, want none", spec, problems)
		}
	}
}

func TestQuotaResourceKind_knowsKubernetesNames(t *testing.T) {
	tests := []struct {
		name           string
		known, integer bool
	}{
		{"requests.cpu", true, false},
		{"limits.memory", true, false},
		{"requests.storage", true, false},
		{"pods", true, true},
		{"services.loadbalancers", true, true},
		{"count/deployments.apps", true, true},
		{"count/configmaps", true, true},
		{"gold.storageclass.storage.k8s.io/requests.storage", true, false},
		{"gold.storageclass.storage.k8s.io/persistentvolumeclaims", true, true},
		{"gold.storageclass.storage.k8s.io/limits.storage", false, false},
		{"requests.hugepages-2Mi", true, false},
		{"hugepages-1Gi", true, false},
		{"requests.nvidia.com/gpu", true, true},
		{"requests.gpu", false, false},
		{"count/", false, true},
		{"count/Deployments", false, true},
		{"limits.storage", false, false},
		{"deployments", false, false},
	}
	for _, tt := range tests {
		known, integer := quotaResourceKind(tt.name)
		if known != tt.known || (known && integer != tt.integer) {
			t.Errorf("quotaResourceKind(%q) = %v, %v; want %v, %v", tt.name, known, integer, tt.known, tt.integer)
		}
	}
}

func TestPath_printsLikeTerraform(t *testing.T) {
	got := Attr("service_account").Attr("rules").Index(2).Attr("verbs").String()
	if got != "service_account.rules[2].verbs" {
		t.Errorf("got %s", got)
	}
	if got := Attr("resource_quota").Key("requests.cpu").String(); got != `resource_quota["requests.cpu"]` {
		t.Errorf("got %s", got)
	}
}
