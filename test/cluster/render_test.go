//go:build e2ecluster

package cluster

import (
	"strings"
	"testing"
	"time"
)

// The quickstart as the README tells users: render it with llmkube-compile,
// apply the output unchanged, and call the router. The router-proxy image
// `make images` built runs under the kubelet, hardened as rendered, and a
// request crosses the router's Service, the router-proxy pod, the cluster
// DNS name of the model's Service and a model pod, and comes back.
func TestRenderedQuickstartServes(t *testing.T) {
	ns := namespace(t, "team-a")
	apply(t, stubModel("qwen3-coder", ns, 2, 0))
	manifests := run(t, "", e.bin, "render", "-f", "examples/quickstart.yaml")
	apply(t, manifests)
	kubectl(t, "-n", ns, "rollout", "status", "deploy/chat-router-proxy", "--timeout=120s")
	kubectl(t, "-n", ns, "rollout", "status", "deploy/qwen3-coder", "--timeout=120s")

	pods := podsOf(t, ns, "app=chat-router-proxy")
	if len(pods) != 1 {
		t.Fatalf("want one router-proxy pod, got %d", len(pods))
	}
	checkHardened(t, pods[0], "router-proxy", "/etc/llmkube/router")

	base := serviceURL(t, ns, "chat-router-proxy")
	seen := map[string]bool{}
	eventually(t, 60*time.Second, "a chat completion through the router's Service", func() error {
		r, err := chat(base, "qwen3-coder", pii)
		if err != nil {
			return err
		}
		if r.servedBy == "" {
			return errorf("%d %s", r.status, r.body)
		}
		seen[r.servedBy] = true
		return nil
	})
	for i := 0; i < 20; i++ {
		seen[mustChat(t, base, "qwen3-coder", pii).servedBy] = true
	}
	for p := range seen {
		if !strings.HasPrefix(p, "qwen3-coder-") {
			t.Errorf("answered by %q, not a qwen3-coder pod", p)
		}
	}

	// A fail-closed rule never reaches the cloud backend: with the local
	// model gone, a PII request is refused, not sent to Anthropic.
	kubectl(t, "-n", ns, "scale", "deploy/qwen3-coder", "--replicas=0")
	eventually(t, 60*time.Second, "the PII rule refusing once the local model is gone", func() error {
		r, err := chat(base, "qwen3-coder", pii)
		if err != nil {
			return err
		}
		if r.status < 500 || r.servedBy != "" {
			return errorf("%d %s", r.status, r.body)
		}
		return nil
	})
}
