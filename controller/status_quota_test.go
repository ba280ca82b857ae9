package controller

import (
	"testing"
	"time"

	"github.com/llmkube/llmkube-compile/targets"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
)

// The router-proxy's quota holds reach BackendsReady: which backends are
// held, why and until when; a held backend stays healthy.
func TestBackendsReadySaysWhichBackendsAreHeld(t *testing.T) {
	until := time.Date(2026, 12, 7, 21, 0, 30, 0, time.UTC)
	s, _ := scope(true, targets.Observation{Health: map[string]targets.BackendHealth{
		"a": {Healthy: true},
		"b": {Healthy: true, RateLimitedUntil: until, Message: "held: rate_limited by its provider until 2026-12-07T21:00:30Z"},
	}})
	setBackendsReadyCondition(s)
	c := cond(t, s, v1.ConditionBackendsReady)
	if c.Status != metav1.ConditionTrue || c.Message != "all 2 backend(s) healthy (router-proxy probes); held by their provider's quota: b rate limited until 2026-12-07T21:00:30Z" {
		t.Errorf("BackendsReady %+v", c)
	}
	if b := s.st.Backends[1]; !b.Healthy || b.Message != "held: rate_limited by its provider until 2026-12-07T21:00:30Z" {
		t.Errorf("b %+v", b)
	}

	s, _ = scope(true, targets.Observation{Health: map[string]targets.BackendHealth{
		"a": {Healthy: false},
		"b": {Healthy: true, QuotaExhaustedUntil: until},
	}})
	setBackendsReadyCondition(s)
	if c := cond(t, s, v1.ConditionBackendsReady); c.Message != "1 of 2 backend(s) not ready: a; held by their provider's quota: b quota exhausted until 2026-12-07T21:00:30Z" {
		t.Errorf("BackendsReady %+v", c)
	}
}
