package faultproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// Proxy forwards TCP connections from Addr to an upstream address.
type Proxy struct {
	proxy *toxiproxy.Proxy

	mu     sync.Mutex
	resets int
}

// Start listens on a free loopback port and forwards every connection to upstream (host:port).
func Start(upstream string) (*Proxy, error) {
	return StartOn("127.0.0.1:0", upstream)
}

// StartOn is Start listening on listen (host:port).
func StartOn(listen, upstream string) (*Proxy, error) {
	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	p := toxiproxy.NewProxy(server, "apiserver", listen, upstream)
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("start proxy to %s: %w", upstream, err)
	}
	return &Proxy{proxy: p}, nil
}

// Addr is the host:port clients connect to.
func (p *Proxy) Addr() string {
	p.proxy.Lock()
	defer p.proxy.Unlock()
	return p.proxy.Listen
}

// Close stops listening and closes every connection.
func (p *Proxy) Close() {
	p.proxy.Stop()
}

// ResetAll closes every open connection, as a tunnel does when it is redeployed: the proxy
// stops, which closes its listener and each connection in both directions, and listens again
// on the same address. A client dialling in the moment between is refused.
func (p *Proxy) ResetAll() error {
	p.proxy.Stop()
	if err := p.proxy.Start(); err != nil {
		return fmt.Errorf("listen again on %s: %w", p.Addr(), err)
	}
	p.mu.Lock()
	p.resets++
	p.mu.Unlock()
	return nil
}

// Resets is how many times ResetAll has run.
func (p *Proxy) Resets() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.resets
}

// Stall holds every byte in both directions for d, on open connections and new ones alike,
// as a tunnel does while its agent reconnects; then data flows again, nothing lost.
func (p *Proxy) Stall(ctx context.Context, d time.Duration) error {
	for _, stream := range []string{"upstream", "downstream"} {
		if err := p.addLatency("stall_"+stream, stream, d); err != nil {
			return err
		}
	}
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
	for _, stream := range []string{"upstream", "downstream"} {
		if err := p.proxy.Toxics.RemoveToxic(context.Background(), "stall_"+stream); err != nil {
			return fmt.Errorf("end stall: %w", err)
		}
	}
	return nil
}

// Delay adds d to every byte's way in each direction from now on, so a round trip takes at
// least twice d, as through a tunnel whose far end is tens of milliseconds away. Requests are
// then in flight most of the time, and a reset breaks them instead of idle connections.
func (p *Proxy) Delay(d time.Duration) error {
	for _, stream := range []string{"upstream", "downstream"} {
		if err := p.addLatency("delay_"+stream, stream, d); err != nil {
			return err
		}
	}
	return nil
}

func (p *Proxy) addLatency(name, stream string, d time.Duration) error {
	body, err := json.Marshal(map[string]any{
		"name":       name,
		"type":       "latency",
		"stream":     stream,
		"toxicity":   1.0,
		"attributes": map[string]any{"latency": d.Milliseconds()},
	})
	if err != nil {
		return err
	}
	if _, err := p.proxy.Toxics.AddToxicJson(bytes.NewReader(body)); err != nil {
		return fmt.Errorf("add %s: %w", name, err)
	}
	return nil
}

// ResetEvery resets every open connection each interval until the returned stop is called
// or ctx ends. stop waits for the schedule to end and returns the error of a reset that
// ended it; calling it again returns the same.
func (p *Proxy) ResetEvery(ctx context.Context, interval time.Duration) (stop func() error) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		ticker := time.NewTicker(interval)
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				done <- nil
				return
			case <-ticker.C:
				if err := p.ResetAll(); err != nil {
					done <- err
					return
				}
			}
		}
	}()
	var once sync.Once
	var err error
	return func() error {
		once.Do(func() {
			cancel()
			err = <-done
		})
		return err
	}
}
