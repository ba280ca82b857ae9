package proxy

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/internal/naming"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/targets"
)

// The Proxy plane's controller side (targets.Cluster): the router-proxy
// Deployment's readiness, its Service as the endpoint, and the backend
// health and budget use the proxy serves on its admin port.
var _ targets.Cluster = (*Target)(nil)

// ReadyCondition implements targets.Cluster.
func (*Target) ReadyCondition() string { return v1.ReadyCondition(v1.DataPlaneProxy) }

// ProbesBackends implements targets.Cluster: the router-proxy probes every
// backend, external ones included.
func (*Target) ProbesBackends() bool { return true }

// ServiceName implements targets.Cluster.
func (*Target) ServiceName(r *ir.Router) string { return r.Proxy.ServiceName }

// StatusURL is where the controller reads a router's proxy status: the
// admin Service on the admin port, at the status path.
func StatusURL(router *v1.ModelRouter) string {
	return fmt.Sprintf("http://%s.%s.svc:%d%s", naming.ProxyAdminServiceName(router.Name), router.Namespace, wellknown.AdminPort, wellknown.StatusPath)
}

var serviceGVK = schema.GroupVersionKind{Version: "v1", Kind: "Service"}

// Observe implements targets.Cluster.
func (t *Target) Observe(ctx context.Context, c targets.ClusterReader, in targets.Applied) (targets.Observation, error) {
	cr := in.Router
	obs := targets.Observation{Applied: true, Lingering: in.Lingering}
	if svc := in.Live[targets.Key(serviceGVK, cr.Namespace, cr.Proxy.ServiceName)]; svc != nil {
		obs.Endpoint = fmt.Sprintf("http://%s.%s.svc.cluster.local:%d%s", svc.GetName(), svc.GetNamespace(), servicePort(svc, cr.Exposure.Port), cr.Exposure.Path)
	}
	obs.Ready, obs.Message = deploymentReady(in)
	obs.Reason = targets.ReasonDeploymentNotReady
	if obs.Ready {
		obs.Reason = targets.ReasonDeploymentReady
	}
	var store *proxyapi.BudgetStoreStatus
	var pools []proxyapi.PoolStatus
	var keys *proxyapi.APIKeyStatus
	obs.Health, obs.Budgets, store, pools, keys = readStatus(ctx, c, in.Spec)
	notePools(cr, obs.Health, pools)
	if store != nil && !store.Healthy {
		effect := "requests are refused with 503 until it answers (failure mode closed)"
		if store.Failure == wellknown.BudgetStoreFailOpen {
			effect = "requests are served and counted per replica until it answers (failure mode open)"
		}
		obs.DegradedReason = targets.ReasonBudgetStoreUnavailable
		obs.Degraded = "the router-proxy cannot reach its budget store (" + store.Message + "); " + effect
	}
	noteAPIKeys(&obs, keys)
	return obs, nil
}

// readStatus asks the proxy for its live state; nil maps when it does not
// answer (status then keeps what it last reported).
func readStatus(ctx context.Context, c targets.ClusterReader, router *v1.ModelRouter) (map[string]targets.BackendHealth, []targets.BudgetUse, *proxyapi.BudgetStoreStatus, []proxyapi.PoolStatus, *proxyapi.APIKeyStatus) {
	log := logr.FromContextOrDiscard(ctx)
	body, err := c.Fetch(ctx, StatusURL(router))
	if err != nil {
		log.V(1).Info("router-proxy status unavailable", "error", err.Error())
		return nil, nil, nil, nil, nil
	}
	var s proxyapi.Status
	if err := json.Unmarshal(body, &s); err != nil {
		log.Info("router-proxy status is not valid JSON", "error", err.Error())
		return nil, nil, nil, nil, nil
	}
	health := map[string]targets.BackendHealth{}
	for _, b := range s.Backends {
		health[b.Name] = targets.BackendHealth{Healthy: b.Healthy, Quarantined: b.Quarantined, LastProbeTime: b.LastProbeTime, Message: b.Message,
			RateLimitedUntil: b.RateLimitedUntil, QuotaExhaustedUntil: b.QuotaExhaustedUntil}
	}
	budgets := []targets.BudgetUse{}
	for _, b := range s.Budgets {
		budgets = append(budgets, targets.BudgetUse{Name: b.Name, TokensUsed: b.TokensUsed, USDUsed: b.USDUsed, Utilization: b.Utilization})
	}
	return health, budgets, s.BudgetStore, s.Pools, s.APIKeys
}

// notePools puts each pooled backend's residency, as the router-proxy sees
// it, into its status message: status.backends[].message is where the
// router's status shows which member of a ModelPool is resident.
func notePools(r *ir.Router, health map[string]targets.BackendHealth, pools []proxyapi.PoolStatus) {
	byName := map[string]proxyapi.PoolStatus{}
	for _, p := range pools {
		byName[p.Name] = p
	}
	for i := range r.Backends {
		b := &r.Backends[i]
		h, ok := health[b.Name]
		if b.Pool == nil || b.Local == nil || !ok {
			continue
		}
		p, ok := byName[b.Pool.Pool]
		if !ok {
			continue
		}
		var note string
		switch {
		case !p.Known:
			note = "ModelPool " + p.Name + ": the router-proxy has not read its members yet"
		case p.Resident == b.Local.InferenceService:
			note = "resident in ModelPool " + p.Name
			if h.Message != "" {
				note += "; " + h.Message
			}
		default:
			resident := p.Resident
			if resident == "" {
				resident = "none"
			}
			note = fmt.Sprintf("not resident in ModelPool %s (resident: %s); made resident on demand", p.Name, resident)
		}
		if p.Pending != "" {
			note += "; swapping to " + p.Pending
		}
		h.Message = note
		health[b.Name] = h
	}
}

func servicePort(svc *unstructured.Unstructured, def int32) int64 {
	ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
	for _, p := range ports {
		if m, ok := p.(map[string]any); ok {
			if n, ok := m["port"].(int64); ok {
				return n
			}
		}
	}
	return int64(def)
}

// deploymentReady reads the proxy Deployment's readiness:
// readyReplicas >= spec.replicas > 0 for the current generation.
func deploymentReady(in targets.Applied) (bool, string) {
	for _, o := range in.Desired {
		if o.GetKind() != "Deployment" {
			continue
		}
		live := in.Live[targets.Key(o.GroupVersionKind(), o.GetNamespace(), o.GetName())]
		if live == nil {
			return false, "Deployment " + o.GetName() + " not applied"
		}
		want, _, _ := unstructured.NestedInt64(live.Object, "spec", "replicas")
		ready, _, _ := unstructured.NestedInt64(live.Object, "status", "readyReplicas")
		observed, _, _ := unstructured.NestedInt64(live.Object, "status", "observedGeneration")
		msg := fmt.Sprintf("Deployment %s: %d/%d replicas ready", o.GetName(), ready, want)
		if want > 0 && ready >= want && observed >= live.GetGeneration() {
			return true, msg
		}
		return false, msg
	}
	return false, "no Deployment generated"
}

// SetStatus implements targets.Cluster: the Proxy plane has no status
// fields of its own beyond the endpoint, backends and budgets.
func (*Target) SetStatus(*v1.ModelRouterStatus, targets.Observation) {}

// ClearStatus implements targets.Cluster.
func (*Target) ClearStatus(*v1.ModelRouterStatus, targets.Lingering) {}

// Lingering implements targets.Cluster: nothing of the proxy's serves
// once the router has moved to another plane.
func (*Target) Lingering(context.Context, targets.ClusterReader, *v1.ModelRouter) targets.Lingering {
	return targets.Lingering{}
}
