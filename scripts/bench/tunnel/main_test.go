package main

import (
	"net/http/httptest"
	"testing"
)

func TestRequestKind(t *testing.T) {
	for _, tc := range []struct{ method, target, want string }{
		{"GET", "/version", "discovery /version"},
		{"GET", "/apis", "discovery /apis"},
		{"GET", "/apis/apps/v1", "discovery group version"},
		{"GET", "/openapi/v3", "openapi index"},
		{"GET", "/openapi/v3/apis/apps/v1?hash=ABC", "openapi document"},
		{"GET", "/api/v1/namespaces/n/secrets?labelSelector=name%3Dbench%2Cowner%3Dhelm", "list secrets (Helm's release records)"},
		{"GET", "/api/v1/namespaces/n/secrets/sh.helm.release.v1.bench.v2", "get secrets (Helm's release records)"},
		{"GET", "/api/v1/namespaces/n/secrets/other", "get secrets"},
		{"PATCH", "/apis/apps/v1/namespaces/n/deployments/web?dryRun=All&fieldManager=gitlabk8s-helm", "dry-run patch deployments"},
		{"GET", "/api/v1/namespaces/n/pods?watch=true", "watch pods"},
		{"GET", "/api/v1/namespaces/n/configmaps", "list configmaps"},
		{"GET", "/api/v1/namespaces/n", "get namespaces"},
		{"GET", "/api/v1/namespaces", "list namespaces"},
		{"PUT", "/api/v1/namespaces/n/finalize", "put namespaces/finalize"},
		{"GET", "/healthz", "GET /healthz"},
	} {
		if got := requestKind(httptest.NewRequest(tc.method, tc.target, nil)); got != tc.want {
			t.Errorf("requestKind(%s %s) = %q, want %q", tc.method, tc.target, got, tc.want)
		}
	}
}

func TestParseRate(t *testing.T) {
	for in, want := range map[string]int64{"20Mbit": 2500, "1Gbit": 125000, "800Kbit": 100, "0": 0} {
		if got, err := parseRate(in); err != nil || got != want {
			t.Errorf("parseRate(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"20MB", "fast", "-1Mbit"} {
		if _, err := parseRate(in); err == nil {
			t.Errorf("parseRate(%q) succeeded, want an error", in)
		}
	}
}
