package environment

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// limitRangeFields names the attributes of limit_range, in the order they are
// reported, with the LimitRange field each one sets.
var limitRangeFields = []struct {
	attribute, field string
	get              func(*LimitRangeSpec) map[string]string
}{
	{"default", "default", func(l *LimitRangeSpec) map[string]string { return l.Default }},
	{"default_request", "defaultRequest", func(l *LimitRangeSpec) map[string]string { return l.DefaultRequest }},
	{"max", "max", func(l *LimitRangeSpec) map[string]string { return l.Max }},
	{"min", "min", func(l *LimitRangeSpec) map[string]string { return l.Min }},
	{"max_limit_request_ratio", "maxLimitRequestRatio", func(l *LimitRangeSpec) map[string]string { return l.MaxLimitRequestRatio }},
}

// ValidateLimitRange checks limit_range: resource names, quantities, and that
// the values do not contradict each other (min <= default request <= default
// limit <= max), with the defaults the API server fills in taken into account.
func ValidateLimitRange(l *LimitRangeSpec) Problems {
	if l == nil {
		return nil
	}
	var ps Problems
	base := Attr("limit_range")
	empty := true
	for _, f := range limitRangeFields {
		values := f.get(l)
		if len(values) > 0 {
			empty = false
		}
		for _, name := range sortedKeys(values) {
			path := base.Attr(f.attribute).Key(name)
			if !isContainerResource(name) {
				ps.add(path, "%q is not a container resource a LimitRange can limit; use %s or hugepages-<size>.", name, strings.Join(ContainerResources, ", "))
				continue
			}
			q, err := parseQuantity(values[name])
			if err != nil {
				ps.add(path, "limit_range.%s for %s: %s.", f.attribute, name, err)
				continue
			}
			if f.attribute == "max_limit_request_ratio" && q.Cmp(*mustQuantity("1")) < 0 {
				ps.add(path, "limit_range.max_limit_request_ratio for %s is %q; a limit is never below its request, so the ratio must be at least 1.", name, values[name])
			}
		}
	}
	if empty {
		ps.add(base, "limit_range sets no values. Set at least one of default, default_request, max, min or max_limit_request_ratio, or remove limit_range.")
	}
	if len(ps) > 0 {
		return ps
	}
	return append(ps, limitRangeContradictions(l)...)
}

// effectiveLimits are a LimitRange's Container limits after the API server's
// defaulting: a missing default limit is the max; a missing default request
// is the default limit, else the min.
type effectiveLimits struct {
	def, defaultRequest map[string]string
	// defaultFrom and defaultRequestFrom name the attribute a value came
	// from, per resource.
	defaultFrom, defaultRequestFrom map[string]string
}

func defaultLimits(l *LimitRangeSpec) effectiveLimits {
	e := effectiveLimits{
		def: map[string]string{}, defaultRequest: map[string]string{},
		defaultFrom: map[string]string{}, defaultRequestFrom: map[string]string{},
	}
	for name, v := range l.Default {
		e.def[name], e.defaultFrom[name] = v, "default"
	}
	for name, v := range l.Max {
		if _, ok := e.def[name]; !ok {
			e.def[name], e.defaultFrom[name] = v, "max"
		}
	}
	for name, v := range l.DefaultRequest {
		e.defaultRequest[name], e.defaultRequestFrom[name] = v, "default_request"
	}
	for name, v := range e.def {
		if _, ok := e.defaultRequest[name]; !ok {
			e.defaultRequest[name], e.defaultRequestFrom[name] = v, e.defaultFrom[name]
		}
	}
	for name, v := range l.Min {
		if _, ok := e.defaultRequest[name]; !ok {
			e.defaultRequest[name], e.defaultRequestFrom[name] = v, "min"
		}
	}
	return e
}

// limitRangeContradictions applies the API server's LimitRange validation to
// valid quantities, so a contradiction fails at plan instead of at apply.
func limitRangeContradictions(l *LimitRangeSpec) Problems {
	var ps Problems
	e := defaultLimits(l)
	type bound struct {
		attribute string // as set by the user, or the attribute it was defaulted from
		value     string
	}
	names := map[string]bool{}
	for _, m := range []map[string]string{l.Max, l.Min, e.def, e.defaultRequest} {
		for name := range m {
			names[name] = true
		}
	}
	base := Attr("limit_range")
	for _, name := range sortedKeys(names) {
		get := func(m map[string]string, attribute string) *bound {
			if v, ok := m[name]; ok {
				return &bound{attribute, v}
			}
			return nil
		}
		min, max := get(l.Min, "min"), get(l.Max, "max")
		def := get(e.def, e.defaultFrom[name])
		req := get(e.defaultRequest, e.defaultRequestFrom[name])
		// Each pair must be ordered lower <= upper; the first pair out of
		// order is reported on the lower value's attribute.
		pairs := []struct {
			lower, upper *bound
			lowerWord    string
			upperWord    string
		}{
			{min, max, "min", "max"},
			{min, req, "min", "default request"},
			{req, max, "default request", "max"},
			{req, def, "default request", "default limit"},
			{min, def, "min", "default limit"},
			{def, max, "default limit", "max"},
		}
		for _, p := range pairs {
			if p.lower == nil || p.upper == nil {
				continue
			}
			if mustQuantity(p.lower.value).Cmp(*mustQuantity(p.upper.value)) <= 0 {
				continue
			}
			// attribute is always one the user set: a defaulted value names
			// the attribute it was copied from.
			ps.add(base.Attr(p.lower.attribute).Key(name), "For %s the %s (%s, from limit_range.%s) is greater than the %s (%s, from limit_range.%s); the API server would reject the LimitRange. "+
				"Kubernetes requires min <= default request <= default limit <= max; a missing default limit is taken from max, a missing default request from the default limit or else min.",
				name, p.lowerWord, p.lower.value, p.lower.attribute, p.upperWord, p.upper.value, p.upper.attribute)
			break
		}
		if ratio := get(l.MaxLimitRequestRatio, "max_limit_request_ratio"); ratio != nil && min != nil && max != nil && mustQuantity(min.value).Sign() > 0 {
			maxRatio := mustQuantity(max.value).AsApproximateFloat64() / mustQuantity(min.value).AsApproximateFloat64()
			if mustQuantity(ratio.value).AsApproximateFloat64() > maxRatio {
				ps.add(base.Attr("max_limit_request_ratio").Key(name), "For %s the max_limit_request_ratio %s is greater than max/min = %s; the API server would reject the LimitRange.",
					name, ratio.value, fmt.Sprintf("%g", maxRatio))
			}
		}
	}
	return ps
}

// limitRangeItem is the Container item of the LimitRange, with the defaults
// the API server fills in, so that it reads back unchanged.
func limitRangeItem(l *LimitRangeSpec) map[string]any {
	e := defaultLimits(l)
	item := map[string]any{"type": "Container"}
	for field, values := range map[string]map[string]string{
		"default":              e.def,
		"defaultRequest":       e.defaultRequest,
		"max":                  l.Max,
		"min":                  l.Min,
		"maxLimitRequestRatio": l.MaxLimitRequestRatio,
	} {
		if len(values) > 0 {
			item[field] = quantities(values)
		}
	}
	return item
}

func quantities(values map[string]string) map[string]any {
	out := make(map[string]any, len(values))
	for name, v := range values {
		out[name] = canonicalQuantity(v)
	}
	return out
}

// mustQuantity parses a quantity already checked by parseQuantity.
func mustQuantity(value string) *resource.Quantity {
	q := resource.MustParse(value)
	return &q
}
