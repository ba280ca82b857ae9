package targets

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/ir"
)

// Cluster is a data plane's controller side: what the controller reads back
// from the cluster after applying the plane's objects, and the plane's own
// part of the router's status. The controller calls it through this
// interface and never names a plane, so a new plane is its folder plus one
// registry line. A Target that runs in a cluster implements it.
type Cluster interface {
	// ReadyCondition is the condition type that reports the plane's readiness.
	ReadyCondition() string
	// ProbesBackends is true when the plane probes every backend itself and
	// reports the result (the router-proxy); on the other planes only local
	// backends have a readiness, read from their InferenceServices.
	ProbesBackends() bool
	// Observe reads the plane's state after every desired object was applied.
	Observe(ctx context.Context, c ClusterReader, in Applied) (Observation, error)
	// SetStatus writes the plane's own status fields (status.gateway,
	// status.agentGateway, ...) from what was observed.
	SetStatus(st *v1.ModelRouterStatus, obs Observation)
	// ServiceName is the client-facing Service the plane generates for the
	// router, or "" when it generates none. A rename keeps the previous
	// Service until the new one is in place.
	ServiceName(r *ir.Router) string
	// ClearStatus removes the plane's own status fields when the router runs
	// on another plane. lingering says what Lingering found.
	ClearStatus(st *v1.ModelRouterStatus, lingering Lingering)
	// Lingering reads what of this plane's objects still serve for the
	// router, for status while the router is refused or has moved away
	// (the last valid objects are never pruned by a refused spec).
	Lingering(ctx context.Context, c ClusterReader, router *v1.ModelRouter) Lingering
}

// Lingering is what Cluster.Lingering found. Known is false when it could
// not be read.
type Lingering struct {
	Known bool
	// Auth is true when an authentication policy of the router is in place.
	Auth bool
}

// ClusterReader is the controller's access to the cluster, narrowed to what
// a plane reads.
type ClusterReader interface {
	// Get returns the object, or nil and no error when it does not exist.
	// It reads the API server (uncached): a plane reads back what was just
	// applied.
	Get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error)
	// List returns the objects of a kind in a namespace ("" for all), each
	// with its apiVersion and kind. It reads the controller's informer
	// cache, which follows the API server by a watch: the lists are the
	// neighbour checks', run for every router of a Gateway in every
	// reconcile, so an uncached list would make each reconcile read every
	// router's objects (quadratic in the routers on one Gateway).
	//
	// The items are not copies: their Object maps are the cache's own,
	// shared by every reconcile running at once (copying them was most of
	// a reconcile's CPU with many routers on one Gateway). Read them only;
	// DeepCopy one before changing anything in it, its kind included.
	List(ctx context.Context, gvk schema.GroupVersionKind, namespace string) ([]unstructured.Unstructured, error)
	// Owned returns the objects of these kinds that the router controls.
	Owned(ctx context.Context, router *v1.ModelRouter, kinds []schema.GroupVersionKind) ([]*unstructured.Unstructured, error)
	// Fetch GETs an in-cluster URL (the router-proxy's admin status).
	Fetch(ctx context.Context, url string) ([]byte, error)
}

// Applied is what the controller applied for a router.
type Applied struct {
	Spec   *v1.ModelRouter
	Router *ir.Router
	// Desired are the objects of this generation; Live the objects the API
	// server returned from the apply, by Key.
	Desired []*unstructured.Unstructured
	Live    map[string]*unstructured.Unstructured
	Summary string
	// Taken, when set, says which desired names are held by objects the
	// router does not control; those objects were not applied.
	Taken string
	// Lingering is what Lingering found after the apply and prune.
	Lingering Lingering
}

// Key identifies an object in Applied.Live.
func Key(gvk schema.GroupVersionKind, namespace, name string) string {
	return gvk.GroupKind().String() + " " + namespace + "/" + name
}

// Condition reasons the planes report on their ReadyCondition.
const (
	ReasonApplied            = "Applied"
	ReasonObjectNameTaken    = "ObjectNameTaken"
	ReasonConflictingPolicy  = "ConflictingPreRoutingPolicy"
	ReasonDeploymentReady    = "DeploymentReady"
	ReasonDeploymentNotReady = "DeploymentNotReady"
	// ReasonBudgetStoreUnavailable: the router-proxy cannot reach its
	// shared budget store.
	ReasonBudgetStoreUnavailable = "BudgetStoreUnavailable"
)

// Generates reports whether the desired objects include a kind.
func (a *Applied) Generates(kind string) bool {
	for _, o := range a.Desired {
		if o.GetKind() == kind {
			return true
		}
	}
	return false
}

// GatewayAddress is the first address a Gateway reports, as a URL; empty
// when the Gateway or its addresses are not known.
func GatewayAddress(ctx context.Context, c ClusterReader, namespace, name string) string {
	gw, err := c.Get(ctx, GatewayGVK, namespace, name)
	if err != nil || gw == nil {
		return ""
	}
	addrs, _, _ := unstructured.NestedSlice(gw.Object, "status", "addresses")
	for _, a := range addrs {
		if m, ok := a.(map[string]any); ok {
			if v, ok := m["value"].(string); ok && v != "" {
				return "http://" + v
			}
		}
	}
	return ""
}

// Observation is a plane's state as read back after an apply.
type Observation struct {
	// Ready says whether the plane serves the router; Reason and Message
	// explain the ReadyCondition.
	Ready           bool
	Reason, Message string
	// Conflict, when set, is another object that may shadow this router's
	// (the router is Degraded); ConflictReason is its reason (default
	// ReasonConflictingPolicy).
	Conflict       string
	ConflictReason string
	// Degraded, when set, says the plane serves with a handicap (the
	// router is Degraded with DegradedReason); the plane stays ready.
	Degraded, DegradedReason string
	// Phase, when set, is the phase a plane that is not ready demands:
	// Pending while the data plane has not answered, Failed when it refused.
	Phase v1.Phase
	// Endpoint is the URL clients use; empty while unknown.
	Endpoint string
	// Health is the plane's own report per backend; nil when it did not
	// answer (status then keeps what it last reported).
	Health map[string]BackendHealth
	// Budgets is the plane's budget use; nil when it did not answer.
	Budgets []BudgetUse
	// Lingering is what Cluster.Lingering found (after the apply, or
	// instead of it when nothing was applied).
	Lingering Lingering
	// Applied is false when nothing was applied this time: the plane
	// reports itself not ready and keeps what it can say.
	Applied bool
	// AuthGenerated: the desired objects include an authentication policy.
	AuthGenerated bool
}

// BackendHealth is one backend's health as the plane reports it.
type BackendHealth struct {
	Healthy, Quarantined bool
	LastProbeTime        time.Time
	Message              string
	// RateLimitedUntil and QuotaExhaustedUntil: the plane skips the
	// backend until then for its provider's rate limit or spent quota
	// (docs/upstream-quota.md); zero when it does not.
	RateLimitedUntil, QuotaExhaustedUntil time.Time
}

// BudgetUse is one budget's use as the plane reports it.
type BudgetUse struct {
	Name        string
	TokensUsed  int64
	USDUsed     string
	Utilization string
}
