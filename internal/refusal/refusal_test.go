package refusal

import "testing"

// The messages are the local cluster's (internal/kube's TestClassifyRefusal_theAPIServersAnswers
// logs them).
func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status Status
		want   Refusal
	}{
		{"rbac", Status{Reason: ReasonForbidden, Message: `configmaps "rbac" is forbidden: User "gitlabk8s-test:nobody" cannot patch resource "configmaps" in API group "" in the namespace "review"`}, Refusal{Class: RBAC}},
		{"rbac, a path", Status{Reason: ReasonForbidden, Message: `forbidden: User "gitlabk8s-test:nobody" cannot get path "/openapi/v3"`}, Refusal{Class: RBAC}},
		{"pod security", Status{Reason: ReasonForbidden, Message: `pods "privileged" is forbidden: violates PodSecurity "restricted:latest": privileged (container "app" must not set securityContext.privileged=true)`}, Refusal{Class: PodSecurity}},
		{"quota", Status{Reason: ReasonForbidden, Message: `services "web" is forbidden: exceeded quota: no-services, requested: services=1, used: services=0, limited: services=0`}, Refusal{Class: Quota}},
		{"quota wording without a 403", Status{Reason: ReasonInvalid, Message: `services "web" is invalid: exceeded quota`}, Refusal{Class: Invalid}},
		{"limit range", Status{Reason: ReasonForbidden, Message: `pods "web" is forbidden: maximum cpu usage per Container is 1, but limit is 2`}, Refusal{Class: Admission}},
		{"webhook", Status{Reason: ReasonForbidden, Message: `admission webhook "deny.example.com" denied the request: images come from registry.example.com`}, Refusal{Class: Webhook, Webhook: "deny.example.com"}},
		{"webhook with its own code", Status{Reason: ReasonBadRequest, Message: `admission webhook "validate.kyverno.svc" denied the request: label team is required`}, Refusal{Class: Webhook, Webhook: "validate.kyverno.svc"}},
		{"webhook with a quote in its name", Status{Reason: ReasonForbidden, Message: `admission webhook "deny.\"x\".example.com" denied the request: no`}, Refusal{Class: Webhook, Webhook: `deny."x".example.com`}},
		{"webhook without dry run", Status{Reason: ReasonBadRequest, Message: `admission webhook "audit.example.com" does not support dry run`}, Refusal{Class: DryRunUnsupported, Webhook: "audit.example.com"}},
		{"policy with 403", Status{Reason: ReasonForbidden, Message: `configmaps "refused" is forbidden: ValidatingAdmissionPolicy 'deny-refuse' with binding 'deny-refuse' denied request: configmaps may not hold the key refuse`,
			Causes: []Cause{{Message: `ValidatingAdmissionPolicy 'deny-refuse' with binding 'deny-refuse' denied request: configmaps may not hold the key refuse`}}}, Refusal{Class: Policy, Policy: "deny-refuse"}},
		{"policy with 422", Status{Reason: ReasonInvalid, Message: `deployments.apps "web" is invalid: : ValidatingAdmissionPolicy 'images' with binding 'images' denied request: images come from registry.example.com`}, Refusal{Class: Policy, Policy: "images"}},
		{"namespace terminating", Status{Reason: ReasonForbidden, Message: `configmaps "late" is forbidden: unable to create new content in namespace review because it is being terminated`,
			Causes: []Cause{{Type: CauseNamespaceTerminating, Message: "namespace review is being terminated", Field: "metadata.namespace"}}}, Refusal{Class: NamespaceTerminating}},
		{"immutable", Status{Reason: ReasonInvalid, Message: "ConfigMap \"frozen\" is invalid: data: Forbidden: field is immutable when `immutable` is set",
			Causes: []Cause{{Type: "FieldValueForbidden", Message: "Forbidden: field is immutable when `immutable` is set", Field: "data"}}}, Refusal{Class: Immutable}},
		{"immutable, no causes", Status{Reason: ReasonInvalid, Message: `Service "web" is invalid: spec.clusterIPs[0]: Invalid value: []string{"10.0.0.2"}: may not change once set`}, Refusal{Class: Immutable}},
		{"statefulset spec", Status{Reason: ReasonInvalid, Message: `StatefulSet.apps "db" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas' are forbidden`,
			Causes: []Cause{{Type: "FieldValueForbidden", Message: "Forbidden: updates to statefulset spec for fields other than 'replicas' are forbidden", Field: "spec"}}}, Refusal{Class: Immutable}},
		{"immutable and invalid", Status{Reason: ReasonInvalid, Message: `Deployment.apps "web" is invalid`,
			Causes: []Cause{{Message: "field is immutable", Field: "spec.selector"}, {Message: "Required value", Field: "spec.template.spec.containers"}}}, Refusal{Class: Invalid}},
		{"invalid name", Status{Reason: ReasonInvalid, Message: `ConfigMap "Not_A_Name" is invalid: metadata.name: Invalid value: "Not_A_Name"`,
			Causes: []Cause{{Type: "FieldValueInvalid", Message: `Invalid value: "Not_A_Name"`, Field: "metadata.name"}}}, Refusal{Class: Invalid}},
		{"unknown field, server-side apply", Status{Message: `failed to create typed patch object (review/web; /v1, Kind=ConfigMap): .spec: field not declared in schema`}, Refusal{Class: Invalid}},
		{"unknown field, strict decoding", Status{Reason: ReasonBadRequest, Message: `strict decoding error: unknown field "spec.size"`}, Refusal{Class: Invalid}},
		{"conflict", Status{Reason: ReasonConflict, Message: `Operation cannot be fulfilled on configmaps "frozen": the object has been modified; please apply your changes to the latest version and try again`}, Refusal{Class: Conflict}},
		{"webhook not reached", Status{Reason: "InternalError", Message: `Internal error occurred: failed calling webhook "deny.example.com": connection refused`}, Refusal{Class: Other}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Classify(tc.status); got != tc.want {
				t.Errorf("Classify = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// A controller's FailedCreate quotes the refusal without its status; the texts are the
// controllers' (internal/readiness's fixtures hold them as events and conditions).
func TestClassifyCreate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		message string
		want    Refusal
	}{
		{"quota", `pods "web-5d8f7c9b6-x7k2p" is forbidden: exceeded quota: review-x, requested: limits.cpu=2, used: limits.cpu=1, limited: limits.cpu=2`, Refusal{Class: Quota}},
		{"pod security", `create Pod db-0 in StatefulSet db failed error: pods "db-0" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false`, Refusal{Class: PodSecurity}},
		{"webhook", `Error creating: admission webhook "images.policy.example.com" denied the request: image registry.example/migrate is not signed`, Refusal{Class: Webhook, Webhook: "images.policy.example.com"}},
		{"policy", `Error creating: pods "web-x" is forbidden: ValidatingAdmissionPolicy 'images' with binding 'images' denied request: images come from registry.example.com`, Refusal{Class: Policy, Policy: "images"}},
		{"limit range", `Error creating: pods "agent-x" is forbidden: maximum cpu usage per Container is 1, but limit is 2`, Refusal{Class: Admission}},
		{"service account not created yet", `Error creating: pods "web-x" is forbidden: error looking up service account review/web: serviceaccount "web" not found`, Refusal{Class: Other}},
		{"webhook not reached", `Error creating: pods "web-x" is forbidden: Internal error occurred: failed calling webhook "deny.example.com": connection refused`, Refusal{Class: Other}},
		{"something else", `Error creating: the server was unable to return a response in the time allotted`, Refusal{Class: Other}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ClassifyCreate(tc.message); got != tc.want {
				t.Errorf("ClassifyCreate = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestIsImmutableMessage(t *testing.T) {
	for _, msg := range []string{"field is immutable", "may not change once set", "Forbidden: updates to statefulset spec for fields other than 'replicas' are forbidden"} {
		if !IsImmutableMessage(msg) {
			t.Errorf("IsImmutableMessage(%q) = false", msg)
		}
	}
	if IsImmutableMessage("Invalid value: \"Not_A_Name\"") {
		t.Error("an invalid value is taken for an immutable field")
	}
}

// The warnings are the local cluster's for a Deployment in a namespace that warns at
// "restricted" and one that enforces "baseline".
func TestPodSecurityViolation(t *testing.T) {
	for _, tc := range []struct {
		warning, level string
		ok             bool
	}{
		{`would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "web" must set securityContext.allowPrivilegeEscalation=false)`, "restricted", true},
		{`would violate PodSecurity "baseline:v1.30": privileged (container "web" must not set securityContext.privileged=true)`, "baseline", true},
		{`spec.template.spec.containers[0].env[0]: hides a previous definition of "A"`, "", false},
		{`violates PodSecurity "restricted:latest": privileged`, "", false},
	} {
		level, ok := PodSecurityViolation(tc.warning)
		if level != tc.level || ok != tc.ok {
			t.Errorf("PodSecurityViolation(%q) = %q, %t; want %q, %t", tc.warning, level, ok, tc.level, tc.ok)
		}
	}
}
