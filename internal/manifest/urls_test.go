package manifest

import (
	"slices"
	"testing"
)

func TestURLs_ingressAndHTTPRoute(t *testing.T) {
	for _, tt := range []struct {
		desc      string
		manifests map[string]string
		want      []string
	}{
		{"no object serves a URL", map[string]string{"Service/app": "kind: Service\nspec:\n  ports:\n  - port: 80\n"}, nil},
		{"ingress with TLS, two paths, and a plain host", map[string]string{"Ingress.networking.k8s.io/app": `kind: Ingress
spec:
  rules:
  - host: review-x.apps.example.com
    http:
      paths:
      - path: /
        pathType: Prefix
      - path: /api
        pathType: Prefix
  - host: plain.example.com
    http:
      paths:
      - path: /docs
  tls:
  - hosts:
    - review-x.apps.example.com
    secretName: tls
`}, []string{"https://review-x.apps.example.com/", "https://review-x.apps.example.com/api", "http://plain.example.com/docs"}},
		{"rules without a usable host", map[string]string{"Ingress.networking.k8s.io/app": `kind: Ingress
spec:
  defaultBackend:
    service:
      name: app
  rules:
  - http:
      paths:
      - path: /
  - host: '*.example.com'
  - host: (sensitive value hmac:0123456789ab)
  - host: nopaths.example.com
`}, []string{"http://nopaths.example.com/"}},
		{"httproute defaults to https", map[string]string{"HTTPRoute.gateway.networking.k8s.io/app": `kind: HTTPRoute
spec:
  hostnames:
  - app.example.com
  parentRefs:
  - name: shared
    namespace: gateways
  rules:
  - matches:
    - path:
        type: PathPrefix
        value: /shop
`}, []string{"https://app.example.com/shop"}},
		{"httproute to an HTTP listener of the release's gateway", map[string]string{
			"Gateway.gateway.networking.k8s.io/gw":    "kind: Gateway\nmetadata:\n  name: gw\nspec:\n  listeners:\n  - name: web\n    port: 80\n    protocol: HTTP\n  - name: secure\n    port: 443\n    protocol: HTTPS\n",
			"HTTPRoute.gateway.networking.k8s.io/app": "kind: HTTPRoute\nspec:\n  hostnames:\n  - a.example.com\n  parentRefs:\n  - name: gw\n    sectionName: web\n",
		}, []string{"http://a.example.com/"}},
		{"httproute on port 80, and an ingress, by key order", map[string]string{
			"HTTPRoute.gateway.networking.k8s.io/app": "kind: HTTPRoute\nspec:\n  hostnames:\n  - b.example.com\n  parentRefs:\n  - name: shared\n    port: 80\n",
			"Ingress.networking.k8s.io/app":           "kind: Ingress\nspec:\n  rules:\n  - host: c.example.com\n",
		}, []string{"http://b.example.com/", "http://c.example.com/"}},
	} {
		t.Run(tt.desc, func(t *testing.T) {
			if got := URLs(tt.manifests); !slices.Equal(got, tt.want) {
				t.Errorf("URLs = %q, want %q", got, tt.want)
			}
		})
	}
}
