package manifest

import (
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// Key prefixes of the objects that serve URLs.
const (
	ingressKeyPrefix   = "Ingress.networking.k8s.io/"
	httpRouteKeyPrefix = "HTTPRoute.gateway.networking.k8s.io/"
	gatewayKeyPrefix   = "Gateway.gateway.networking.k8s.io/"
)

// ServesURLs reports whether the object of key can change URLs: an
// Ingress, an HTTPRoute, or a Gateway, whose listeners decide an HTTPRoute's
// scheme.
func ServesURLs(key string) bool {
	return strings.HasPrefix(key, ingressKeyPrefix) || strings.HasPrefix(key, httpRouteKeyPrefix) || strings.HasPrefix(key, gatewayKeyPrefix)
}

// URLs returns the URLs the Ingress and Gateway API HTTPRoute objects among
// manifests serve, by key order, then rule and path order, without
// duplicates: `<scheme>://<host><path>`. An Ingress host listed in its `tls`
// is https, any other http. An HTTPRoute is https unless its parent is a
// Gateway among manifests whose listener (the parentRef's sectionName, else
// every listener) speaks HTTP, or the parentRef names port 80. A rule without
// a host, a wildcard host, or a host hidden by a sensitive value has no URL;
// a rule without paths serves "/".
func URLs(manifests map[string]string) []string {
	keys := make([]string, 0, len(manifests))
	for key := range manifests {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	gateways := gatewaySchemes(manifests, keys)
	var urls []string
	add := func(scheme, host, path string) {
		if host == "" || strings.Contains(host, "*") || strings.ContainsAny(host, " ()/") {
			return
		}
		if path == "" {
			path = "/"
		}
		if u := scheme + "://" + host + path; !slices.Contains(urls, u) {
			urls = append(urls, u)
		}
	}
	for _, key := range keys {
		switch {
		case strings.HasPrefix(key, ingressKeyPrefix):
			ingressURLs(manifests[key], add)
		case strings.HasPrefix(key, httpRouteKeyPrefix):
			httpRouteURLs(manifests[key], gateways, add)
		}
	}
	return urls
}

type ingressSpec struct {
	Spec struct {
		TLS []struct {
			Hosts []string `json:"hosts"`
		} `json:"tls"`
		Rules []struct {
			Host string `json:"host"`
			HTTP *struct {
				Paths []struct {
					Path string `json:"path"`
				} `json:"paths"`
			} `json:"http"`
		} `json:"rules"`
	} `json:"spec"`
}

func ingressURLs(text string, add func(scheme, host, path string)) {
	var ing ingressSpec
	if yaml.Unmarshal([]byte(text), &ing) != nil {
		return
	}
	secure := map[string]bool{}
	for _, tls := range ing.Spec.TLS {
		for _, host := range tls.Hosts {
			secure[host] = true
		}
	}
	for _, rule := range ing.Spec.Rules {
		scheme := "http"
		if secure[rule.Host] {
			scheme = "https"
		}
		if rule.HTTP == nil || len(rule.HTTP.Paths) == 0 {
			add(scheme, rule.Host, "/")
			continue
		}
		for _, p := range rule.HTTP.Paths {
			add(scheme, rule.Host, p.Path)
		}
	}
}

type httpRouteSpec struct {
	Metadata struct {
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Spec struct {
		ParentRefs []struct {
			Kind        string `json:"kind"`
			Name        string `json:"name"`
			SectionName string `json:"sectionName"`
			Port        *int   `json:"port"`
		} `json:"parentRefs"`
		Hostnames []string `json:"hostnames"`
		Rules     []struct {
			Matches []struct {
				Path *struct {
					Value string `json:"value"`
				} `json:"path"`
			} `json:"matches"`
		} `json:"rules"`
	} `json:"spec"`
}

func httpRouteURLs(text string, gateways map[string]string, add func(scheme, host, path string)) {
	var route httpRouteSpec
	if yaml.Unmarshal([]byte(text), &route) != nil {
		return
	}
	scheme := "https"
	for _, ref := range route.Spec.ParentRefs {
		if ref.Kind != "" && ref.Kind != "Gateway" {
			continue
		}
		if s, ok := gateways[ref.Name+"/"+ref.SectionName]; ok {
			scheme = s
		} else if s, ok := gateways[ref.Name+"/"]; ok && ref.SectionName == "" {
			scheme = s
		}
		if ref.Port != nil && *ref.Port == 80 {
			scheme = "http"
		}
		break
	}
	var paths []string
	for _, rule := range route.Spec.Rules {
		for _, match := range rule.Matches {
			if match.Path != nil {
				paths = append(paths, match.Path.Value)
			}
		}
	}
	if len(paths) == 0 {
		paths = []string{"/"}
	}
	for _, host := range route.Spec.Hostnames {
		for _, path := range paths {
			add(scheme, host, path)
		}
	}
}

type gatewaySpec struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Listeners []struct {
			Name     string `json:"name"`
			Protocol string `json:"protocol"`
		} `json:"listeners"`
	} `json:"spec"`
}

// gatewaySchemes maps "<gateway>/<listener>" to the listener's scheme, and
// "<gateway>/" to https when any listener is HTTPS, else http.
func gatewaySchemes(manifests map[string]string, keys []string) map[string]string {
	out := map[string]string{}
	for _, key := range keys {
		if !strings.HasPrefix(key, gatewayKeyPrefix) {
			continue
		}
		var gw gatewaySpec
		if yaml.Unmarshal([]byte(manifests[key]), &gw) != nil || gw.Metadata.Name == "" {
			continue
		}
		anyListener := "http"
		for _, l := range gw.Spec.Listeners {
			scheme := "http"
			if l.Protocol == "HTTPS" || l.Protocol == "TLS" {
				scheme, anyListener = "https", "https"
			}
			out[gw.Metadata.Name+"/"+l.Name] = scheme
		}
		out[gw.Metadata.Name+"/"] = anyListener
	}
	return out
}
