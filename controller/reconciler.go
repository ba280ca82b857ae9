// Package controller is the in-cluster consumer of the compiler: it reads a
// ModelRouter and what it references, compiles it with the same pipeline as
// the CLI, applies every generated object with server-side apply (field
// manager llmkube-compile), prunes what the router generated before and no
// longer does, and reports truthful status.
package controller

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/compiler"
	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/internal/httpget"
	"github.com/llmkube/llmkube-compile/internal/naming"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/pipeline"
	"github.com/llmkube/llmkube-compile/platform"
	"github.com/llmkube/llmkube-compile/targets"
)

// Finalizer is set on every ModelRouter the controller reconciles. On
// deletion the controller removes every object in the router's inventory,
// including objects in other namespaces that cannot carry an owner
// reference, then removes the finalizer.
const Finalizer = "inference.llmkube.dev/cleanup"

// DefaultMaxConcurrentReconciles: a reconcile spends most of its time
// waiting for the API server, so one worker leaves the controller's core
// idle while routers queue up (a settle of 1,000 routers); a few overlap
// those waits without making the API server the bottleneck of one
// controller.
const DefaultMaxConcurrentReconciles = 4

// DefaultRecheckInterval is how often a reconciled router is looked at again
// without any event: foreign PreRouting policies, proxy health and budgets.
const DefaultRecheckInterval = 2 * time.Minute

// Reasons set by the controller itself (the compiler's diagnostics supply the rest).
const (
	ReasonSpecValid               = "SpecValid"
	ReasonSpecInvalid             = "SpecInvalid"
	ReasonDataPlaneNotImplemented = "DataPlaneNotImplemented"
	ReasonCRDsNotInstalled        = "CRDsNotInstalled"
	ReasonApplyFailed             = "ApplyFailed"
	ReasonRouterProxyNameTaken    = "RouterProxyNameTaken"
	ReasonBackendsHealthy         = "BackendsHealthy"
	ReasonBackendsResolved        = "BackendsResolved"
	ReasonBackendsNotReady        = "BackendsNotReady"
	ReasonAwaitingProbe           = "AwaitingProbe"
	ReasonNotDegraded             = "NotDegraded"
	ReasonBackendsUnhealthy       = "BackendsUnhealthy"
	ReasonNotReconciled           = "NotReconciled"
	// ReasonHealthUnknown starts the message of a backend whose health the
	// data plane does not report (an external provider on a gateway plane).
	ReasonHealthUnknown = "HealthUnknown"
)

// The reasons a plane reports on its readiness condition (Applied,
// DeploymentReady, GatewayNotFound, RejectedByDataPlane, ...) are the
// planes' own: package targets holds them.

// StatusGetter fetches the router-proxy's admin status JSON from url.
type StatusGetter func(ctx context.Context, url string) ([]byte, error)

// Reconciler reconciles ModelRouters.
type Reconciler struct {
	// Client reads through the manager's cache and writes.
	Client client.Client
	// Reader reads uncached (live generated objects and inventory lists).
	Reader client.Reader
	// Cache serves the planes' neighbour lists (targets.ClusterReader.List:
	// other routers' and other teams' policies, routes and models on a
	// Gateway): the manager's cache, which starts an informer for a kind
	// the first time it is listed. Nil lists through Reader.
	Cache client.Reader
	// Mapper answers which kinds the API server serves (discovery).
	Mapper meta.RESTMapper
	// Registry holds the data-plane targets of this build.
	Registry *targets.Registry
	// Operator are the operator's settings (the router-proxy image used when
	// spec.proxy.image is unset, the OTLP collector), bound from the same
	// flags as the CLI's.
	Operator platform.Settings
	// Recorder emits events; nil disables them.
	Recorder events.EventRecorder
	// GetStatus reads the proxy's admin status; nil uses HTTP.
	GetStatus StatusGetter
	// RecheckInterval defaults to DefaultRecheckInterval.
	RecheckInterval time.Duration
	// MaxConcurrentReconciles is how many routers are reconciled at once
	// (different routers; one router is never reconciled twice at once).
	// Defaults to DefaultMaxConcurrentReconciles.
	MaxConcurrentReconciles int
	// CRDRetryInterval is how soon a router whose data-plane CRDs are missing
	// is looked at again (besides the CRD watch). Defaults to 30s.
	CRDRetryInterval time.Duration

	applied  appliedCache
	pruned   prunedCache
	watches  dataPlaneWatches
	schemas  crdSchemas
	together togetherCache
}

// +kubebuilder:rbac:groups=inference.llmkube.dev,resources=modelrouters,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=inference.llmkube.dev,resources=modelrouters/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=inference.llmkube.dev,resources=modelrouters/finalizers,verbs=update
// +kubebuilder:rbac:groups=inference.llmkube.dev,resources=inferenceservices;modelpools,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=configmaps;services;serviceaccounts,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=services/proxy,verbs=get
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings,verbs=get;list;watch;create;update;patch;delete;bind;escalate
// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=gateways,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=httproutes;referencegrants,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=aigateway.envoyproxy.io,resources=aigatewayroutes;aiservicebackends;backendsecuritypolicies,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=gateway.envoyproxy.io,resources=backends;backendtrafficpolicies;clienttrafficpolicies;securitypolicies,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=inference.networking.k8s.io,resources=inferencepools,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=inference.networking.x-k8s.io,resources=inferenceobjectives,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=agentgateway.dev,resources=agentgatewaypolicies;agentgatewaybackends;agentgatewaymodels,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := logf.FromContext(ctx)
	router := &v1.ModelRouter{}
	if err := r.Client.Get(ctx, req.NamespacedName, router); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !router.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.finalize(ctx, router)
	}
	if !controllerutil.ContainsFinalizer(router, Finalizer) {
		patch := client.MergeFromWithOptions(router.DeepCopy(), client.MergeFromWithOptimisticLock{})
		controllerutil.AddFinalizer(router, Finalizer)
		if err := r.Client.Patch(ctx, router, patch); err != nil {
			return ctrl.Result{}, err
		}
		// Nothing was ever applied for it: nothing to prune (prunedCache).
		r.pruned.set(router.UID, freshRouter)
	}

	out, err := r.reconcile(ctx, router)
	if err != nil {
		log.Error(err, "reconcile failed")
	}
	if serr := r.writeStatus(ctx, router, out); serr != nil {
		if err == nil && apierrors.IsConflict(serr) {
			// The cached router was older than the server's (patchStatus):
			// look again as soon as the cache has caught up.
			log.V(1).Info("status written from a stale router; reconciling again", "error", serr.Error())
			return ctrl.Result{RequeueAfter: StaleRetryInterval}, nil
		}
		return ctrl.Result{}, errors.Join(err, serr)
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: out.requeueAfter(r, router.Status.Phase), Priority: ptr.To(RecheckPriority)}, nil
}

// StaleRetryInterval is how soon a reconcile whose status write found the
// router changed since it was read (patchStatus) runs again.
const StaleRetryInterval = 50 * time.Millisecond

// RecheckPriority is the work-queue priority of a router's periodic
// recheck: below the events a watch delivers (a spec change or an
// InferenceService changing: priority 0; a generated object changing:
// GeneratedObjectPriority), so that with many routers
// rechecked every 15 s (Pending, Provisioning) a spec change is not queued
// behind all of them. It is controller-runtime's priority for the initial
// list, which a recheck is much like.
const RecheckPriority = handler.LowPriority

// outcome is everything one reconcile learnt, for status.
type outcome struct {
	router   *ir.Router // nil when the spec did not compile
	diags    diag.List
	summary  string
	plane    ir.DataPlane
	cluster  targets.Cluster           // the plane's controller side; nil when not built
	notBuilt string                    // data plane not in the registry
	missing  []schema.GroupVersionKind // CRDs not served
	outdated []string                  // fields the installed CRDs do not declare
	desired  []*unstructured.Unstructured
	applied  bool    // every desired object is in place
	applyErr error   // apply or prune failure
	taken    []taken // desired names held by objects we do not control
	// obs is what the plane's controller side read back after the apply.
	obs targets.Observation
	// lingering is what each plane still has serving for the router
	// (targets.Cluster.Lingering), read when nothing was applied, and for
	// the router's own plane after the apply.
	lingering map[ir.DataPlane]targets.Lingering
	live      map[string]*unstructured.Unstructured
}

type taken struct {
	obj        *unstructured.Unstructured
	proxyName  bool
	previous   string // name of the previous data-plane Service kept, if any
	controller string
}

// requeueAfter is when the router is looked at again, given the phase the
// status steps just wrote.
func (o *outcome) requeueAfter(r *Reconciler, phase v1.Phase) time.Duration {
	if len(o.missing) > 0 || len(o.outdated) > 0 {
		if r.CRDRetryInterval > 0 {
			return r.CRDRetryInterval
		}
		return 30 * time.Second
	}
	switch {
	case o.obs.Phase == v1.PhasePending && !r.awaitsEvent(o):
		// Waiting for something no watch delivers (a listener that does not
		// admit the route, or a kind not watched yet): look again soon.
		return min(PendingRecheckInterval, r.recheckInterval())
	case o.obs.Ready && (phase == v1.PhaseDegraded || phase == v1.PhaseProvisioning):
		// Backend health comes from the router-proxy's probes, which no
		// watch sees: a model that turns healthy seconds after the proxy
		// started (the real-cluster tests' usual case) would otherwise stay
		// Degraded in status for the whole recheck interval. A workload that
		// is not ready yet is watched (its Deployment): no poll.
		return min(PendingRecheckInterval, r.recheckInterval())
	}
	return r.recheckInterval()
}

// PendingRecheckInterval is how soon a router that is not settled (Pending:
// no Gateway yet, or no answer from the data plane; Provisioning; Degraded)
// is looked at again.
const PendingRecheckInterval = 15 * time.Second

func (r *Reconciler) recheckInterval() time.Duration {
	if r.RecheckInterval > 0 {
		return r.RecheckInterval
	}
	return DefaultRecheckInterval
}

func (r *Reconciler) reconcile(ctx context.Context, router *v1.ModelRouter) (*outcome, error) {
	out := &outcome{plane: cmp.Or(ir.DataPlane(router.Spec.DataPlane), ir.DataPlane(compiler.DefaultDataPlane)),
		live: map[string]*unstructured.Unstructured{}, lingering: map[ir.DataPlane]targets.Lingering{}}
	out.cluster, _ = r.Registry.Cluster(out.plane)
	refs, err := readRefs(ctx, r.Client, router.Namespace)
	if err != nil {
		return out, fmt.Errorf("reading references: %w", err)
	}
	object := "ModelRouter/" + router.Name
	reader := r.clusterReader()
	// When nothing is applied or pruned below, the last valid objects keep
	// serving: status must say what of them is in force.
	keepObjects := func() (*outcome, error) {
		for dp, c := range r.Registry.Clusters() {
			out.lingering[dp] = c.Lingering(ctx, reader, router)
		}
		return out, nil
	}
	// The kinds this router emits must be served before anything is applied
	// (Model routing, for one, emits no InferencePool).
	crdsServed := func(res *targets.Result) (bool, error) {
		missing, err := missingKinds(r.Mapper, res.Kinds())
		if err != nil {
			return false, fmt.Errorf("discovery: %w", err)
		}
		out.missing = missing
		return len(missing) == 0, nil
	}
	// References read from the cluster are the whole truth: an
	// InferenceService that is not there is not ready.
	opts := pipeline.Options{Compile: compiler.Options{Operator: r.Operator, Authoritative: true}}
	plan, err := pipeline.Plan(compiler.RouterSource{Router: router}, refs, r.Registry, opts, crdsServed)
	if err != nil {
		return out, err
	}
	out.diags = plan.Diags
	if plan.Router != nil {
		out.plane = plan.Router.DataPlane
		out.cluster, _ = r.Registry.Cluster(out.plane)
	}
	switch {
	case plan.Router == nil:
		return keepObjects()
	case plan.NotBuilt != nil:
		out.notBuilt = plan.NotBuilt.Error()
		return keepObjects()
	case out.cluster == nil:
		out.notBuilt = fmt.Sprintf("data plane %s has no controller side in this build", out.plane)
		return keepObjects()
	case len(out.missing) > 0 || plan.Result == nil:
		return keepObjects()
	}
	compiled, res := plan.Router, plan.Result
	// The installed CRDs must accept every field written: checked before
	// anything is applied (at start, and again when a CRD changes).
	if out.outdated, err = r.outdatedFields(ctx, res.Objects); err != nil {
		return out, err
	}
	if len(out.outdated) > 0 {
		return keepObjects()
	}
	shared, err := r.checkTogether(ctx, router, compiled, plan.Target)
	if err != nil {
		return out, err
	}
	out.diags = append(out.diags, shared.WithObject("", object)...)
	if shared.HasErrors() {
		return keepObjects()
	}
	out.router = compiled
	out.summary = res.Summary
	out.desired = res.Objects
	r.emitWarnings(router, out.diags)

	err = r.apply(ctx, router, out)
	if err != nil {
		// Some objects may be in place that a later desired set does not
		// hold: the next apply prunes.
		r.pruned.forget(router.UID)
	}
	// Read back, not assumed from the spec: a failed apply, or a taken name
	// (which skips pruning), can leave objects in force that the spec no
	// longer asks for.
	out.lingering[out.plane] = out.cluster.Lingering(ctx, reader, router)
	if err != nil {
		out.applyErr = err
		return out, err
	}
	out.applied = true
	reader.remember(out.live)
	out.obs, err = out.cluster.Observe(ctx, reader, targets.Applied{Spec: router, Router: compiled, Desired: out.desired, Live: out.live,
		Summary: out.summary, Taken: takenMessage(out.taken), Lingering: out.lingering[out.plane]})
	r.noteRecheck(&out.obs)
	return out, err
}

// noteRecheck says, after a conflict a plane observed, when the controller
// looks again: at most this reconciler's recheck interval (the flag), or
// sooner while the router is not settled. A plane's finding names what is in
// the way and not when it is looked at again, since the CLI reports the
// same finding (validate, render) where nothing rechecks.
func (r *Reconciler) noteRecheck(obs *targets.Observation) {
	if obs.Conflict != "" {
		obs.Conflict += " (rechecked at least every " + compiler.ShortDuration(r.recheckInterval()) + ")"
	}
}

// apply server-side applies the desired objects, then prunes the inventory.
// Nothing is pruned unless every desired object is in place, so a renamed
// Service is deleted only after the new one exists, and a name held by a
// foreign object keeps the previous object.
func (r *Reconciler) apply(ctx context.Context, router *v1.ModelRouter, out *outcome) error {
	desired := map[string]bool{}
	var deferred []*unstructured.Unstructured // Services applied without their pinned nodePort
	for _, obj := range out.desired {
		desired[objKey(obj)] = true
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(obj.GroupVersionKind())
		err := r.Reader.Get(ctx, client.ObjectKeyFromObject(obj), live)
		switch {
		case apierrors.IsNotFound(err):
			live = nil
		case err != nil:
			return fmt.Errorf("reading %s: %w", describe(obj), err)
		}
		if live != nil && !controlledBy(live, router) {
			t := taken{obj: obj}
			if ref := metav1.GetControllerOfNoCopy(live); ref != nil {
				t.controller = ref.Kind + "/" + ref.Name
			}
			if out.router != nil && isService(obj) && obj.GetName() == out.cluster.ServiceName(out.router) {
				t.proxyName = true
			}
			out.taken = append(out.taken, t)
			continue
		}
		got, err := r.applyOne(ctx, obj, live)
		if err != nil && isService(obj) && len(nodePortsOf(obj)) > 0 && apierrors.IsInvalid(err) {
			// A pinned nodePort still held by the previous Service of this
			// router (a rename): create the new Service with an allocated
			// port first, prune the old one, then pin the port.
			got, err = r.applyOne(ctx, withoutNodePorts(obj), live)
			if err == nil {
				deferred = append(deferred, obj)
			}
		}
		if err != nil {
			return fmt.Errorf("applying %s: %w", describe(obj), err)
		}
		out.live[objKey(obj)] = got
	}
	if len(out.taken) > 0 {
		// Prune nothing: the router keeps everything it had, in particular
		// its previous data-plane Service.
		r.pruned.forget(router.UID)
		for i := range out.taken {
			if !out.taken[i].proxyName {
				continue
			}
			if prev := r.previousProxyService(ctx, router, out.desired); prev != nil {
				out.taken[i].previous = prev.GetName()
				out.live[objKey(out.taken[i].obj)] = prev
			}
		}
		return nil
	}
	keys := desiredKeys(desired)
	if !r.pruned.upToDate(router.UID, keys) {
		if err := r.prune(ctx, router, desired, false); err != nil {
			return err
		}
	}
	r.pruned.set(router.UID, keys)
	for _, obj := range deferred {
		got, err := r.applyOne(ctx, obj, out.live[objKey(obj)])
		if err != nil {
			return fmt.Errorf("applying %s: %w", describe(obj), err)
		}
		out.live[objKey(obj)] = got
	}
	return nil
}

// applyOne server-side applies obj unless live is exactly what the last
// apply of the same desired object left behind.
func (r *Reconciler) applyOne(ctx context.Context, obj, live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	desired := obj.DeepCopy()
	hash, err := hashObject(desired)
	if err != nil {
		return nil, err
	}
	k := objKey(obj)
	if live != nil {
		// Unchanged since our own apply of the same desired object (status
		// and write bookkeeping aside: liveHash): no write.
		if rec, ok := r.applied.get(k); ok && rec.hash == hash {
			if lh, err := liveHash(live); err == nil && lh == rec.live {
				return live, nil
			}
		}
	}
	if err := r.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(desired), client.FieldOwner(naming.ManagedBy), client.ForceOwnership); err != nil {
		r.applied.forget(k)
		return nil, err
	}
	if lh, err := liveHash(desired); err == nil {
		r.applied.set(k, appliedRecord{hash: hash, live: lh})
	} else {
		r.applied.forget(k)
	}
	return desired, nil
}

// previousProxyService is the data-plane Service this router applied before
// (in its inventory, not the admin Service, not desired now).
func (r *Reconciler) previousProxyService(ctx context.Context, router *v1.ModelRouter, desired []*unstructured.Unstructured) *unstructured.Unstructured {
	want := map[string]bool{}
	for _, o := range desired {
		want[objKey(o)] = true
	}
	svc := corev1.SchemeGroupVersion.WithKind("Service")
	inv, err := inventory(ctx, r.Reader, r.Mapper, router, []schema.GroupVersionKind{svc}, r.crossNamespace)
	if err != nil {
		return nil
	}
	for _, o := range inv {
		if !want[objKey(o)] && o.GetName() != naming.ProxyAdminServiceName(router.Name) {
			return o
		}
	}
	return nil
}

// prune deletes every object in the router's inventory, across every kind
// any target of this build can generate, that is not desired. Objects in
// other namespaces are looked for across the cluster only among the kinds
// a target places there (targets.CrossNamespace): that list reads every
// object of the kind, so running it for every kind in every reconcile would
// make each reconcile cost grow with the whole cluster. On deletion
// (everywhere) every kind is looked for in every namespace.
func (r *Reconciler) prune(ctx context.Context, router *v1.ModelRouter, desired map[string]bool, everywhere bool) error {
	kinds, err := servedKinds(r.Mapper, r.Registry.AllKinds())
	if err != nil {
		return err
	}
	cross := r.crossNamespace
	if everywhere {
		cross = func(schema.GroupVersionKind) bool { return true }
	}
	inv, err := inventory(ctx, r.Reader, r.Mapper, router, kinds, cross)
	if err != nil {
		return err
	}
	for _, o := range inv {
		if desired[objKey(o)] {
			continue
		}
		logf.FromContext(ctx).Info("pruning", "object", describe(o))
		if err := deleteObject(ctx, r.Client, o); err != nil {
			return fmt.Errorf("pruning %s: %w", describe(o), err)
		}
	}
	return nil
}

// crossNamespace reports whether a target of this build places objects of
// a kind outside the router's namespace (targets.CrossNamespace).
func (r *Reconciler) crossNamespace(gvk schema.GroupVersionKind) bool {
	for _, k := range r.Registry.CrossNamespaceKinds() {
		if k == gvk {
			return true
		}
	}
	return false
}

// finalize removes every object in the router's inventory (owner references
// would let the garbage collector remove the namespaced ones; objects in
// other namespaces have none), then the finalizer.
func (r *Reconciler) finalize(ctx context.Context, router *v1.ModelRouter) error {
	if !controllerutil.ContainsFinalizer(router, Finalizer) {
		return nil
	}
	r.pruned.forget(router.UID)
	if err := r.prune(ctx, router, nil, true); err != nil {
		return err
	}
	patch := client.MergeFromWithOptions(router.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(router, Finalizer)
	return client.IgnoreNotFound(r.Client.Patch(ctx, router, patch))
}

// emitWarnings turns the compiler's warnings into Warning events, once per
// generation (when the Validated condition has not seen it yet).
func (r *Reconciler) emitWarnings(router *v1.ModelRouter, diags diag.List) {
	if r.Recorder == nil {
		return
	}
	if c := meta.FindStatusCondition(router.Status.Conditions, v1.ConditionValidated); c != nil && c.ObservedGeneration == router.Generation {
		return
	}
	for _, d := range diags.Warnings() {
		note := d.Message
		if d.Field != "" {
			note = d.Field + ": " + note
		}
		r.Recorder.Eventf(router, nil, corev1.EventTypeWarning, d.Reason, "Compile", "%s", truncate(note, 1000))
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

// diagLines renders diagnostics one per line: "FIELD: MESSAGE (Reason)".
func diagLines(l diag.List) string {
	var lines []string
	for _, d := range l.Sorted() {
		d.File, d.Object = "", ""
		lines = append(lines, d.String())
	}
	return strings.Join(lines, "; ")
}

func sortedKinds(ks []schema.GroupVersionKind) []string {
	var out []string
	for _, k := range ks {
		out = append(out, k.Kind+"."+k.Group+"/"+k.Version)
	}
	sort.Strings(out)
	return out
}

// defaultGetStatus reads the proxy's admin status over HTTP.
func defaultGetStatus(ctx context.Context, url string) ([]byte, error) {
	return httpget.Get(ctx, url, 3*time.Second, 1<<20)
}

// checkTogether runs a target's cross-router check (targets.Together; the
// Gateway plane's shared virtual host) between this router and every other
// router of the cluster on the same data plane, as the CLI does across the
// routers of one input. A router being deleted, or one that does not
// compile, takes no part.
//
// It runs in every reconcile, so its cost is kept linear in the routers on
// the data plane: routers of other planes are skipped before compiling (the
// plane is spec.dataPlane, defaulted), the others' compiled form is kept
// between reconciles (togetherCache: by uid, generation and their
// namespace's references), and a target that can (targets.TogetherOne)
// compares this router with each other once instead of every pair.
func (r *Reconciler) checkTogether(ctx context.Context, router *v1.ModelRouter, compiled *ir.Router, target targets.Target) (diag.List, error) {
	tg, ok := target.(targets.Together)
	if !ok {
		return nil, nil
	}
	// Every router of the cluster, as the cache holds them: not copied
	// (every reconcile would copy the whole fleet), so read only; Compile
	// copies before defaulting.
	var all v1.ModelRouterList
	if err := r.Client.List(ctx, &all, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing routers: %w", err)
	}
	// Reads come from the manager's cache and compiling is pure, so this is
	// in-memory work per router; references are read once per namespace.
	var others []*ir.Router
	refsIn := map[string]*clusterRefs{}
	keyIn := map[string]string{}
	seen := make(map[types.UID]togetherEntry, len(all.Items))
	for i := range all.Items {
		other := &all.Items[i]
		if !other.DeletionTimestamp.IsZero() {
			continue
		}
		samePlane := cmp.Or(ir.DataPlane(other.Spec.DataPlane), ir.DataPlane(compiler.DefaultDataPlane)) == compiled.DataPlane
		if gwNS, gwName, ok := compiled.AttachedGateway(); other.UID == router.UID || !samePlane || (ok && !attachesTo(other, gwNS, gwName)) {
			// This router, or one on another plane or Gateway: nothing to
			// compare (every check is per plane and Gateway), so neither its
			// references nor its compile are read. What was compiled for it
			// is kept for the reconciles of its plane's and Gateway's
			// routers: dropped, a fleet of several planes recompiled every
			// router on a Gateway in nearly every reconcile (the next router
			// in the queue is usually of another plane), half of the
			// controller's CPU at 5,000 routers.
			if e, ok := r.together.get(other.UID); ok {
				seen[other.UID] = e
			}
			continue
		}
		refs, ok := refsIn[other.Namespace]
		if !ok {
			var err error
			if refs, err = readRefs(ctx, r.Client, other.Namespace); err != nil {
				return nil, err
			}
			refsIn[other.Namespace] = refs
			keyIn[other.Namespace] = refs.fingerprint()
		}
		e, ok := r.together.get(other.UID)
		if !ok || e.generation != other.Generation || e.refs != keyIn[other.Namespace] {
			c, diags := compiler.Compile(other, refs, compiler.Options{Operator: r.Operator, Planes: r.Registry.Capabilities()}) // the frontend only: the shared check reads the IR
			e = togetherEntry{generation: other.Generation, refs: keyIn[other.Namespace]}
			if !diags.HasErrors() {
				e.router = c
			}
		}
		seen[other.UID] = e
		if e.router != nil && e.router.DataPlane == compiled.DataPlane {
			others = append(others, e.router)
		}
	}
	r.together.replace(seen)
	if len(others) == 0 {
		return nil, nil
	}
	if one, ok := tg.(targets.TogetherOne); ok {
		return one.CheckOne(compiled, others), nil
	}
	return tg.CheckTogether(append([]*ir.Router{compiled}, others...))[0], nil
}

// togetherEntry is another router's compiled form as checkTogether last
// computed it: nil when it did not compile. It depends on nothing but the
// router's spec (its generation; uid, name and namespace never change) and
// the references of its namespace (refs: their fingerprint); the operator
// settings are fixed for the process.
type togetherEntry struct {
	generation int64
	refs       string
	router     *ir.Router // read only: shared between reconciles
}

// togetherCache holds the togetherEntry of every router checkTogether saw
// last time (routers gone from the cluster are dropped with replace).
type togetherCache struct {
	mu sync.Mutex
	m  map[types.UID]togetherEntry
}

func (c *togetherCache) get(uid types.UID) (togetherEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[uid]
	return e, ok
}

func (c *togetherCache) replace(m map[types.UID]togetherEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m = m
}
