package validate

import (
	"strings"
	"testing"
)

// A workload's pods are evaluated as Pod Security admission evaluates them: its pod template,
// at the level and the policy version of the target Kubernetes version.
func TestPodSecurity(t *testing.T) {
	const deployment = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: nginx
`
	const privileged = deployment + `          securityContext: {privileged: true}
`
	const meetsRestricted = deployment + `          securityContext:
            allowPrivilegeEscalation: false
            capabilities: {drop: [ALL]}
            runAsNonRoot: true
            seccompProfile: {type: RuntimeDefault}
`
	const keepalive = `
apiVersion: batch/v1
kind: CronJob
metadata: {name: tune}
spec:
  schedule: "@daily"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          securityContext:
            sysctls: [{name: net.ipv4.tcp_keepalive_time, value: "60"}]
          containers: [{name: tune, image: busybox}]
`
	const configMap = `
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {privileged: "true"}
`
	for _, tt := range []struct {
		name, text, level, target string
		version                   string   // the namespace's enforce-version label
		want                      []string // what the level forbids, in the admission's words; none when allowed
		unknownLevel              bool
	}{
		{name: "privileged container under baseline", text: privileged, level: "baseline",
			want: []string{`privileged (container "web" must not set securityContext.privileged=true)`}},
		{name: "privileged container under privileged", text: privileged, level: "privileged"},
		{name: "no security context under baseline", text: deployment, level: "baseline"},
		{name: "no security context under restricted", text: deployment, level: "restricted",
			want: []string{"allowPrivilegeEscalation != false", "unrestricted capabilities", "runAsNonRoot != true", "seccompProfile"}},
		{name: "what restricted asks for", text: meetsRestricted, level: "restricted"},
		{name: "a CronJob's pods, a sysctl baseline allows from 1.29", text: keepalive, level: "baseline", target: "1.29"},
		{name: "the same sysctl in a cluster of 1.28", text: keepalive, level: "baseline", target: "1.28",
			want: []string{"forbidden sysctls (net.ipv4.tcp_keepalive_time)"}},
		{name: "a version label older than the cluster", text: keepalive, level: "baseline", version: "v1.28", target: "1.30",
			want: []string{"forbidden sysctls (net.ipv4.tcp_keepalive_time)"}},
		{name: "a version label newer than the cluster", text: keepalive, level: "baseline", version: "v1.30", target: "1.28",
			want: []string{"forbidden sysctls (net.ipv4.tcp_keepalive_time)"}},
		{name: "a version label of latest", text: keepalive, level: "baseline", version: "latest", target: "1.30"},
		{name: "no pods", text: configMap, level: "restricted"},
		{name: "not a level", text: privileged, level: "strict", unknownLevel: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var target Version
			if tt.target != "" {
				target = mustVersion(t, tt.target)
			}
			got, known := PodSecurity(objectsOf(t, tt.text)[0].Object, tt.level, tt.version, target)
			if known == tt.unknownLevel {
				t.Fatalf("PodSecurity(%q) known = %v", tt.level, known)
			}
			if len(tt.want) == 0 && got != "" {
				t.Errorf("PodSecurity = %q, want the pods allowed", got)
			}
			if len(tt.want) > 0 && got == "" {
				t.Errorf("PodSecurity allowed the pods, want %q forbidden", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("PodSecurity = %q, want it to name %q", got, w)
				}
			}
		})
	}
}
