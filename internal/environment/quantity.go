package environment

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

// StandardQuotaResources are the ResourceQuota resource names Kubernetes
// defines, besides those in [QuotaResourcePatterns].
var StandardQuotaResources = []string{
	"requests.cpu", "requests.memory", "requests.ephemeral-storage", "requests.storage",
	"limits.cpu", "limits.memory", "limits.ephemeral-storage",
	"cpu", "memory", "ephemeral-storage",
	"pods", "services", "services.loadbalancers", "services.nodeports",
	"configmaps", "secrets", "persistentvolumeclaims", "replicationcontrollers", "resourcequotas",
}

// QuotaResourcePatterns describe the families of ResourceQuota resource names
// Kubernetes accepts besides [StandardQuotaResources].
var QuotaResourcePatterns = []string{
	"count/<resource> (core group, e.g. count/configmaps)",
	"count/<resource>.<group> (e.g. count/deployments.apps)",
	"<storage class>.storageclass.storage.k8s.io/requests.storage",
	"<storage class>.storageclass.storage.k8s.io/persistentvolumeclaims",
	"hugepages-<size> and requests.hugepages-<size> (e.g. requests.hugepages-2Mi)",
	"requests.<domain>/<extended resource> (e.g. requests.nvidia.com/gpu)",
}

// integerQuotaResources count objects, so their quota must be a whole number.
var integerQuotaResources = map[string]bool{
	"pods": true, "services": true, "services.loadbalancers": true, "services.nodeports": true,
	"configmaps": true, "secrets": true, "persistentvolumeclaims": true, "replicationcontrollers": true, "resourcequotas": true,
}

const storageClassQuotaInfix = ".storageclass.storage.k8s.io/"

// quotaResourceKind classifies a quota resource name: ok is false for a
// name Kubernetes does not know, integer is true when its quantity counts
// objects or extended resources and must be whole.
func quotaResourceKind(name string) (ok, integer bool) {
	for _, standard := range StandardQuotaResources {
		if name == standard {
			return true, integerQuotaResources[name]
		}
	}
	if rest, found := strings.CutPrefix(name, "count/"); found {
		return rest != "" && len(validation.IsDNS1123Subdomain(rest)) == 0, true
	}
	if class, resourceName, found := strings.Cut(name, storageClassQuotaInfix); found {
		if len(validation.IsDNS1123Subdomain(class)) > 0 {
			return false, false
		}
		switch resourceName {
		case "requests.storage":
			return true, false
		case "persistentvolumeclaims":
			return true, true
		}
		return false, false
	}
	if isHugePages(strings.TrimPrefix(name, "requests.")) {
		return true, false
	}
	if extended, found := strings.CutPrefix(name, "requests."); found && strings.Contains(extended, "/") {
		return len(validation.IsQualifiedName(extended)) == 0 && !strings.Contains(extended, "kubernetes.io/"), true
	}
	return false, false
}

func isHugePages(name string) bool {
	size, found := strings.CutPrefix(name, "hugepages-")
	if !found {
		return false
	}
	q, err := resource.ParseQuantity(size)
	return err == nil && q.Sign() > 0
}

// ContainerResources are the resource names a LimitRange for containers may
// limit, besides hugepages-<size>.
var ContainerResources = []string{"cpu", "memory", "ephemeral-storage"}

func isContainerResource(name string) bool {
	for _, r := range ContainerResources {
		if name == r {
			return true
		}
	}
	return isHugePages(name)
}

// quantityExamples finishes every quantity error.
const quantityExamples = `write quantities as Kubernetes does, e.g. "2", "500m", "1.5", "512Mi" or "10Gi"`

// parseQuantity parses a quantity the way the API server does and rejects
// negative values, which no quota or limit accepts.
func parseQuantity(value string) (resource.Quantity, error) {
	q, err := resource.ParseQuantity(value)
	if err != nil {
		return q, fmt.Errorf("%q is not a quantity; %s", value, quantityExamples)
	}
	if q.Sign() < 0 {
		return q, fmt.Errorf("%q is negative; quantities must be zero or more", value)
	}
	return q, nil
}

// canonicalQuantity returns the form the API server stores a quantity in
// ("0.5" becomes "500m", "1024Mi" becomes "1Gi"), so the manifest planned is
// the manifest read back. value must be valid.
func canonicalQuantity(value string) string {
	q, err := resource.ParseQuantity(value)
	if err != nil {
		return value
	}
	return q.String()
}
