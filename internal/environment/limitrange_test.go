package environment

import (
	"maps"
	"testing"
)

func TestLimitRangeItem_fillsDefaultsLikeTheAPIServer(t *testing.T) {
	tests := []struct {
		desc                     string
		spec                     LimitRangeSpec
		wantDefault, wantRequest map[string]any
	}{
		{"default limit from max, request from limit", LimitRangeSpec{Max: map[string]string{"cpu": "2"}},
			map[string]any{"cpu": "2"}, map[string]any{"cpu": "2"}},
		{"request from min when there is no limit", LimitRangeSpec{Min: map[string]string{"memory": "64Mi"}},
			nil, map[string]any{"memory": "64Mi"}},
		{"explicit values win", LimitRangeSpec{Max: map[string]string{"cpu": "2"}, Default: map[string]string{"cpu": "1"}, DefaultRequest: map[string]string{"cpu": "0.1"}},
			map[string]any{"cpu": "1"}, map[string]any{"cpu": "100m"}},
		{"limit beats min for the request", LimitRangeSpec{Default: map[string]string{"cpu": "1"}, Min: map[string]string{"cpu": "10m"}},
			map[string]any{"cpu": "1"}, map[string]any{"cpu": "1"}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			item := limitRangeItem(&tt.spec)
			gotDefault, _ := item["default"].(map[string]any)
			gotRequest, _ := item["defaultRequest"].(map[string]any)
			if !maps.Equal(gotDefault, tt.wantDefault) || !maps.Equal(gotRequest, tt.wantRequest) {
				t.Errorf("default = %v, defaultRequest = %v; want %v, %v", gotDefault, gotRequest, tt.wantDefault, tt.wantRequest)
			}
			if item["type"] != "Container" {
				t.Errorf("type = %v", item["type"])
			}
		})
	}
}

func TestCanonicalQuantity_isWhatTheAPIServerStores(t *testing.T) {
	for in, want := range map[string]string{"0.5": "500m", "1024Mi": "1Gi", "1000m": "1", "2": "2", "1.5Gi": "1536Mi", "100M": "100M"} {
		if got := canonicalQuantity(in); got != want {
			t.Errorf("canonicalQuantity(%q) = %q, want %q", in, got, want)
		}
	}
}
