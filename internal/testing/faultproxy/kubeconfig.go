package faultproxy

import (
	"fmt"
	"net/url"

	"k8s.io/client-go/tools/clientcmd"
)

// Kubeconfig writes to out a copy of the kubeconfig at in whose every cluster is reached
// through the proxy. Only the address changes: TLS passes through, so the clusters'
// certificate authorities and server names stay valid.
func (p *Proxy) Kubeconfig(in, out string) error {
	config, err := clientcmd.LoadFromFile(in)
	if err != nil {
		return fmt.Errorf("read kubeconfig %s: %w", in, err)
	}
	for name, cluster := range config.Clusters {
		server, err := url.Parse(cluster.Server)
		if err != nil {
			return fmt.Errorf("cluster %s: server %q: %w", name, cluster.Server, err)
		}
		if cluster.TLSServerName == "" {
			cluster.TLSServerName = server.Hostname()
		}
		server.Host = p.Addr()
		cluster.Server = server.String()
	}
	if err := clientcmd.WriteToFile(*config, out); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", out, err)
	}
	return nil
}

// UpstreamOf returns the host:port of the current context's cluster in the kubeconfig at path.
func UpstreamOf(path string) (string, error) {
	config, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return "", fmt.Errorf("read kubeconfig %s: %w", path, err)
	}
	ctx, ok := config.Contexts[config.CurrentContext]
	if !ok {
		return "", fmt.Errorf("kubeconfig %s: no current context", path)
	}
	cluster, ok := config.Clusters[ctx.Cluster]
	if !ok {
		return "", fmt.Errorf("kubeconfig %s: no cluster %q", path, ctx.Cluster)
	}
	server, err := url.Parse(cluster.Server)
	if err != nil {
		return "", fmt.Errorf("kubeconfig %s: server %q: %w", path, cluster.Server, err)
	}
	return server.Host, nil
}
