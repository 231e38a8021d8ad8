package provider

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
)

// admissionWebhook is a validating admission webhook served by the test over HTTPS on
// loopback, where the local API server reaches it, with a certificate of a CA made for it.
type admissionWebhook struct {
	url      string
	caBundle []byte

	mu       sync.Mutex
	requests []admissionv1.AdmissionRequest
}

// serveAdmissionWebhook starts a webhook that answers each request with decide's response
// (the UID is filled in) and stops it when the test ends.
func serveAdmissionWebhook(t *testing.T, decide func(*admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse) *admissionWebhook {
	t.Helper()
	hook := &admissionWebhook{}
	server := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
			return
		}
		hook.mu.Lock()
		hook.requests = append(hook.requests, *review.Request)
		hook.mu.Unlock()
		response := decide(review.Request)
		response.UID = review.Request.UID
		review.Request, review.Response = nil, response
		_ = json.NewEncoder(w).Encode(review)
	}))
	cert, caPEM := loopbackCertificate(t)
	server.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	server.StartTLS()
	t.Cleanup(server.Close)
	hook.url, hook.caBundle = server.URL+"/validate", caPEM
	return hook
}

// dryRuns returns how many of the requests the webhook answered were dry runs.
func (h *admissionWebhook) dryRuns() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, r := range h.requests {
		if r.DryRun != nil && *r.DryRun {
			n++
		}
	}
	return n
}

// register installs a ValidatingWebhookConfiguration calling h for the resources given, in
// e's namespace only, and removes it when the test ends. A webhook the API server cannot reach
// is ignored (failurePolicy Ignore), so nothing outside the test ever depends on it.
func (h *admissionWebhook) register(t *testing.T, e *releaseTestEnv, name string, sideEffects admissionregistrationv1.SideEffectClass, rules ...admissionregistrationv1.Rule) {
	t.Helper()
	config := h.configuration(e, name, sideEffects, rules)
	configs := e.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	if _, err := configs.Create(context.Background(), config, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = configs.Delete(context.Background(), config.Name, metav1.DeleteOptions{}) })
}

// registerLegacy installs, as register does, a configuration whose webhook declares side
// effects (sideEffects Some or Unknown). The API server has refused to create such a webhook
// since admissionregistration.k8s.io/v1beta1 went away (Kubernetes 1.22), but still calls the
// ones a cluster kept from before; so the configuration is written into etcd, where such a
// cluster holds it.
func (h *admissionWebhook) registerLegacy(t *testing.T, e *releaseTestEnv, name string, sideEffects admissionregistrationv1.SideEffectClass, rules ...admissionregistrationv1.Rule) {
	t.Helper()
	config := h.configuration(e, name, sideEffects, rules)
	config.TypeMeta = metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingWebhookConfiguration"}
	uid := make([]byte, 16)
	_, _ = rand.Read(uid)
	config.UID = types.UID(fmt.Sprintf("%x-%x-%x-%x-%x", uid[0:4], uid[4:6], uid[6:8], uid[8:10], uid[10:]))
	config.CreationTimestamp = metav1.Now()
	value, err := json.Marshal(config)
	if err != nil {
		t.Fatal(err)
	}
	port := os.Getenv("GITLABK8S_ETCD_PORT")
	if port == "" {
		port = "12379"
	}
	// etcd's JSON gateway: keys and values in base64.
	body, _ := json.Marshal(map[string]string{
		"key":   base64.StdEncoding.EncodeToString([]byte("/registry/validatingwebhookconfigurations/" + config.Name)),
		"value": base64.StdEncoding.EncodeToString(value),
	})
	resp, err := http.Post("http://127.0.0.1:"+port+"/v3/kv/put", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Skipf("the local cluster's etcd is not reachable on port %s to hold a webhook with side effects: %v", port, err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("etcd put: %s", resp.Status)
	}
	configs := e.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	t.Cleanup(func() { _ = configs.Delete(context.Background(), config.Name, metav1.DeleteOptions{}) })
}

// configuration is the ValidatingWebhookConfiguration of one webhook calling h.
func (h *admissionWebhook) configuration(e *releaseTestEnv, name string, sideEffects admissionregistrationv1.SideEffectClass, rules []admissionregistrationv1.Rule) *admissionregistrationv1.ValidatingWebhookConfiguration {
	ignore := admissionregistrationv1.Ignore
	timeout := int32(5)
	withOperations := make([]admissionregistrationv1.RuleWithOperations, 0, len(rules))
	for _, r := range rules {
		withOperations = append(withOperations, admissionregistrationv1.RuleWithOperations{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			Rule:       r,
		})
	}
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: e.namespace + "-" + name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    name + "." + e.namespace + ".gitlabk8s.test",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &h.url, CABundle: h.caBundle},
			Rules:                   withOperations,
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: e.namespace}},
			FailurePolicy:           &ignore,
			SideEffects:             &sideEffects,
			TimeoutSeconds:          &timeout,
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
}

// unregister removes the configuration register installed under name.
func (h *admissionWebhook) unregister(t *testing.T, e *releaseTestEnv, name string) {
	t.Helper()
	err := e.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), e.namespace+"-"+name, metav1.DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// loopbackCertificate makes a CA and a serving certificate it signs for 127.0.0.1, and returns
// the certificate with its key and the CA's certificate in PEM, for a webhook's caBundle.
func loopbackCertificate(t *testing.T) (tls.Certificate, []byte) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTemplate := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "gitlabk8s test webhook CA"},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(time.Hour),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leafTemplate := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTemplate, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{leafDER}, PrivateKey: key}, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
}

// waitForAdmission waits until the API server's answer to a dry-run create of a Deployment in
// e's namespace says answer: the webhooks just registered are in force.
func waitForAdmission(t *testing.T, e *releaseTestEnv, answer string) {
	t.Helper()
	probe := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "admission-probe"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "probe"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "probe"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "probe", Image: "nginx"}}},
			},
		},
	}
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, last = e.kube.AppsV1().Deployments(e.namespace).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return last != nil && strings.Contains(last.Error(), answer), nil
	})
	if err != nil {
		t.Fatalf("the API server never answered %q to a dry run (last answer: %v)", answer, last)
	}
}
