// Command starts measures how long provider binaries take from their start to the handshake
// line Terraform waits for, started as Terraform starts them (go-plugin's environment, with a
// client certificate for automatic mTLS), one after another in turn, and prints each binary's
// median and quartiles. Terraform starts the provider three times for a plan and four for an
// apply, so what a start costs counts that many times in every command.
//
//	go run ./scripts/bench/starts -n 40 OLD/terraform-provider-gitlabk8s NEW/terraform-provider-gitlabk8s
package main

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"slices"
	"time"
)

func main() {
	n := flag.Int("n", 40, "starts of each binary")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: starts [-n N] BINARY...")
		os.Exit(2)
	}
	cert, err := clientCertificate()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bins := flag.Args()
	took := make([][]time.Duration, len(bins))
	for i := range *n {
		// Each round starts the binaries in another order.
		for j := range bins {
			k := (i + j) % len(bins)
			d, err := handshake(bins[k], cert)
			if err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v\n", bins[k], err)
				os.Exit(1)
			}
			took[k] = append(took[k], d)
		}
	}
	for k, bin := range bins {
		slices.Sort(took[k])
		q := func(p int) float64 { return float64(took[k][(len(took[k])-1)*p/100].Microseconds()) / 1000 }
		fmt.Printf("%s\tmedian %.1f ms\tquartiles %.1f to %.1f ms\t(%d starts)\n", bin, q(50), q(25), q(75), len(took[k]))
	}
}

// handshake starts bin as Terraform does and returns the time until its handshake line.
func handshake(bin string, cert []byte) (time.Duration, error) {
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(),
		"TF_PLUGIN_MAGIC_COOKIE=d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2",
		"PLUGIN_PROTOCOL_VERSIONS=5,6", "PLUGIN_MIN_PORT=10000", "PLUGIN_MAX_PORT=25000",
		"PLUGIN_CLIENT_CERT="+string(cert))
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	took := time.Since(start)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if err != nil {
		return 0, fmt.Errorf("no handshake line (%q): %w", line, err)
	}
	return took, nil
}

// clientCertificate is a self-signed certificate like the one Terraform hands each process.
func clientCertificate() ([]byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	if err != nil {
		return nil, err
	}
	template := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "localhost"},
		DNSNames:              []string{"localhost"},
		NotBefore:             time.Now().Add(-time.Minute),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, key.Public(), key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}
