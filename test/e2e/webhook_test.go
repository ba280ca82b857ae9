package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// selfSigned writes tls.crt and tls.key for 127.0.0.1 into dir, signed by a
// CA made here, and returns the CA's PEM.
func selfSigned(t *testing.T, dir string) []byte {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "llmkube-e2e-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	write := func(name, typ string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("tls.crt", "CERTIFICATE", der)
	write("tls.key", "EC PRIVATE KEY", keyDER)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
}

// TestWebhookProcess serves the validating webhook from the controller
// binary with a certificate made here, registers config/webhook's
// ValidatingWebhookConfiguration pointed at it, and has the API server
// refuse an invalid ModelRouter with the compiler's field path and reason.
func TestWebhookProcess(t *testing.T) {
	e, _ := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	certDir := t.TempDir()
	caPEM := selfSigned(t, certDir)
	kc := filepath.Join(t.TempDir(), "admin.kubeconfig")
	if err := e.WriteKubeconfig(kc, ""); err != nil {
		t.Fatal(err)
	}
	port, probe := freePort(t), freePort(t)
	p := start(t, binary(t, "llmkube-controller"),
		"--kubeconfig", kc,
		"--metrics-bind-address", "0",
		"--health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", probe),
		"--webhook-port", fmt.Sprint(port), "--webhook-cert-dir", certDir)
	p.waitReady(t, probe)

	// config/webhook's configuration, its Service reference replaced by the
	// process's loopback URL (no Service routing in envtest).
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "webhook", "manifests.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var vwc admissionv1.ValidatingWebhookConfiguration
	if err := yaml.UnmarshalStrict(bytesAfterSeparator(data), &vwc); err != nil {
		t.Fatal(err)
	}
	if len(vwc.Webhooks) == 0 {
		t.Fatal("config/webhook/manifests.yaml has no webhook")
	}
	for i := range vwc.Webhooks {
		w := &vwc.Webhooks[i]
		if w.ClientConfig.Service == nil || w.ClientConfig.Service.Path == nil {
			t.Fatalf("webhook %s has no service path", w.Name)
		}
		url := fmt.Sprintf("https://127.0.0.1:%d%s", port, *w.ClientConfig.Service.Path)
		w.ClientConfig = admissionv1.WebhookClientConfig{URL: &url, CABundle: caPEM}
	}
	vwc.Name = "llmkube-e2e"
	b, _ := yaml.Marshal(vwc)
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(b, &u.Object); err != nil {
		t.Fatal(err)
	}
	u.SetAPIVersion("admissionregistration.k8s.io/v1")
	u.SetKind("ValidatingWebhookConfiguration")
	if err := e.ApplyStrict(ctx, u); err != nil {
		t.Fatal(err)
	}

	ns := e.NewNamespace(t)
	invalid := strings.Replace(routerDoc, "defaultRoute: llama", "defaultRoute: nowhere", 1)
	// The webhook takes a moment to be called once registered: retry until the
	// refusal comes from it.
	var msg string
	eventually(t, "invalid ModelRouter refused by the webhook", func() error {
		errs := e.ApplyYAMLInNamespace(ctx, ns, []byte(invalid))
		if len(errs) == 0 {
			return fmt.Errorf("the invalid router was accepted")
		}
		msg = fmt.Sprint(errs)
		if !strings.Contains(msg, "vmodelrouter.inference.llmkube.dev") {
			return fmt.Errorf("refused, but not by the webhook: %s", msg)
		}
		return nil
	})
	for _, want := range []string{"spec.defaultRoute", "(UnknownBackend)"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the refusal lacks %q: %s", want, msg)
		}
	}
	if errs := e.ApplyYAMLInNamespace(ctx, ns, []byte(routerDoc)); len(errs) > 0 {
		t.Fatalf("a valid router is refused: %v", errs)
	}
	p.stop(t)
}

// bytesAfterSeparator drops a leading "---" document marker.
func bytesAfterSeparator(b []byte) []byte {
	s := strings.TrimSpace(string(b))
	return []byte(strings.TrimPrefix(s, "---"))
}
