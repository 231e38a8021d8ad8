package testcluster

import (
	"net"
	"testing"
)

func TestZombie_readsTheStateAfterTheCommand(t *testing.T) {
	for stat, want := range map[string]bool{
		"4242 (kube-apiserver) S 1 4242":   false,
		"4242 (kube-apiserver) Z 1 4242":   true,
		"4242 (a) Z) R 1 4242":             false, // a command holding ") Z" is not the state
		"4242 (kube-apiserver) X 1 4242":   true,
		"4242 (kube-apiserver":             false,
		"4242 (kube-apiserver) T 1 4242 0": false, // stopped (SIGSTOP) is still there
	} {
		if got := zombie(stat); got != want {
			t.Errorf("zombie(%q) = %v, want %v", stat, got, want)
		}
	}
}

// A port something listens on is skipped, and so is a pair whose second port is taken.
func TestFreePorts_skipsTakenPorts(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr, ok := taken.Addr().(*net.TCPAddr)
	if !ok {
		t.Fatalf("listener address %T", taken.Addr())
	}
	port := addr.Port
	if portsFree(port, 1) {
		t.Fatalf("portsFree says port %d, which is listened on, is free", port)
	}
	if got, err := freePorts(port, 1); err != nil || got == port {
		t.Fatalf("freePorts(%d, 1) = %d, %v; want another port", port, got, err)
	}
	if got, err := freePorts(port-1, 2); err != nil || got == port-1 || (got <= port && got+1 >= port) {
		t.Fatalf("freePorts(%d, 2) = %d, %v; want a pair without %d", port-1, got, err, port)
	}
}
