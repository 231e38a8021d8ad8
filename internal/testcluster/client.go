package testcluster

import (
	"fmt"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// RESTConfig returns a client configuration for one of the kubeconfig's contexts (AdminContext
// or CIJobContext; "" means the current one, AdminContext).
func (c *Cluster) RESTConfig(context string) (*rest.Config, error) {
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: c.Kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: context},
	)
	config, err := loader.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("load context %q from %s: %w", context, c.Kubeconfig, err)
	}
	// client-go's defaults (5 requests/s) would make tests that set up many objects slow for
	// no reason on a cluster that serves nobody else.
	config.QPS = 50
	config.Burst = 100
	return config, nil
}

// Clientset returns a typed client authenticated as the given context's user.
func (c *Cluster) Clientset(context string) (*kubernetes.Clientset, error) {
	config, err := c.RESTConfig(context)
	if err != nil {
		return nil, err
	}
	clientset, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, fmt.Errorf("client for context %q: %w", context, err)
	}
	return clientset, nil
}
