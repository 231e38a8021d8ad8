package helmrelease

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/gitlabk8s/terraform-provider-gitlabk8s/internal/kube"
)

var _ genericclioptions.RESTClientGetter = (*clientsGetter)(nil)

// clientsGetter hands Helm the provider's shared clients, so Helm neither reads a kubeconfig
// of its own nor runs a second discovery.
type clientsGetter struct {
	clients   *kube.Clients
	namespace string
}

func (g *clientsGetter) ToRESTConfig() (*rest.Config, error) {
	// Helm's factory may adjust the configuration it gets; the shared one must not change.
	return rest.CopyConfig(g.clients.Config), nil
}

func (g *clientsGetter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	return g.clients.Discovery, nil
}

func (g *clientsGetter) ToRESTMapper() (meta.RESTMapper, error) {
	return g.clients.Mapper, nil
}

// ToRawKubeConfigLoader only supplies the namespace: the REST configuration comes from
// ToRESTConfig.
func (g *clientsGetter) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	return clientcmd.NewDefaultClientConfig(*clientcmdapi.NewConfig(), &clientcmd.ConfigOverrides{
		Context: clientcmdapi.Context{Namespace: g.namespace},
	})
}
