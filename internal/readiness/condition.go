package readiness

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// Condition is one entry of an object's status.conditions.
type Condition struct {
	Status  string
	Reason  string
	Message string
}

// True tells a condition whose status is True.
func (c Condition) True() bool { return c.Status == "True" }

// ConditionOf returns obj's condition of the given type, and whether it has
// one. It is the one reader of status.conditions: a Pod's, a workload's, a
// Job's and an APIService's are read alike.
func ConditionOf(obj *unstructured.Unstructured, conditionType string) (Condition, bool) {
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conditions {
		entry, _ := c.(map[string]any)
		if entry["type"] != conditionType {
			continue
		}
		var out Condition
		out.Status, _ = entry["status"].(string)
		out.Reason, _ = entry["reason"].(string)
		out.Message, _ = entry["message"].(string)
		return out, true
	}
	return Condition{}, false
}
