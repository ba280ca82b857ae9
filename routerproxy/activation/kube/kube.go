// Package kube implements activation.Cluster and activation.Coordinator over
// the Kubernetes API: members are InferenceServices, read and scaled through
// a dynamic client, and each pool's swaps are serialized by a
// coordination.k8s.io Lease.
//
// What the router-proxy's Role grants is exactly what this uses: get and
// patch on the member InferenceServices, create on leases, get and update on
// the pools' Leases (targets/proxy).
package kube

import (
	"context"
	"fmt"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/routerproxy/activation"
)

// InferenceServices is the members' resource.
var InferenceServices = schema.GroupVersionResource{Group: "inference.llmkube.dev", Version: "v1alpha1", Resource: "inferenceservices"}

// Leases is the resource of the pools' swap Leases. They are read and written
// through the dynamic client like the members: the router-proxy links no
// typed clientset (those register every API group, about 30 MB of resident
// memory).
var Leases = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}

// Cluster is activation.Coordinated over the API server.
type Cluster struct {
	dyn      dynamic.Interface
	identity string
	duration time.Duration
	now      func() time.Time

	mu       sync.Mutex
	observed map[string]observation // lease name -> what we last saw of another holder's Lease
}

// observation is when a foreign Lease's resourceVersion was first seen: the
// Lease is expired once it has not changed for its duration, measured on this
// replica's clock (as client-go's leader election does), so clock skew
// between replicas does not matter.
type observation struct {
	rv   string
	seen time.Time
}

// New builds the cluster side of activation. identity names this replica in
// the Leases (the pod name); duration is how long a Lease lives without
// renewal.
func New(dyn dynamic.Interface, identity string, duration time.Duration) *Cluster {
	if duration <= 0 {
		duration = activation.DefaultLeaseDuration
	}
	return &Cluster{dyn: dyn, identity: identity, duration: duration, now: time.Now, observed: map[string]observation{}}
}

var _ activation.Coordinated = (*Cluster)(nil)

// CallTimeout bounds one API call, so a swap whose API server went away
// fails the call and says so instead of hanging in client retries.
const CallTimeout = 5 * time.Second

// Member implements activation.Cluster.
func (c *Cluster) Member(ctx context.Context, ns, name string) (activation.Member, error) {
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	u, err := c.dyn.Resource(InferenceServices).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return activation.Member{}, err
	}
	replicas, found, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	if !found {
		replicas = 1 // the CRD's default
	}
	phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
	return activation.Member{Replicas: int32(replicas), Phase: phase}, nil
}

// Scale implements activation.Cluster with a merge patch of spec.replicas.
func (c *Cluster) Scale(ctx context.Context, ns, name string, replicas int32) error {
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	patch := fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, replicas)
	_, err := c.dyn.Resource(InferenceServices).Namespace(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: fieldManager})
	return err
}

// Holder implements activation.Coordinator.
func (c *Cluster) Holder(ctx context.Context, ns, pool string) (string, string, error) {
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	l, err := c.leases(ns).get(ctx, wellknown.PoolLeaseName(pool))
	if apierrors.IsNotFound(err) {
		return "", "", nil
	}
	if err != nil {
		return "", "", err
	}
	h := ptr.Deref(l.Spec.HolderIdentity, "")
	if h != "" && h != c.identity && c.expired(l) {
		return "", "", nil
	}
	return h, l.Annotations[wellknown.PoolSwapTargetAnnotation], nil
}

// Acquire implements activation.Coordinator.
func (c *Cluster) Acquire(ctx context.Context, ns, pool, target string) (context.Context, func(), string, error) {
	name := wellknown.PoolLeaseName(pool)
	leases := c.leases(ns)
	now := metav1.NewMicroTime(c.now())
	// The calls are bounded; the held context derives from ctx itself.
	call, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	l, err := leases.get(call, name)
	switch {
	case apierrors.IsNotFound(err):
		l = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
		c.hold(l, target, now)
		if l, err = leases.create(call, l); err != nil {
			if apierrors.IsAlreadyExists(err) {
				return nil, nil, "another replica", nil
			}
			return nil, nil, "", err
		}
	case err != nil:
		return nil, nil, "", err
	default:
		if h := ptr.Deref(l.Spec.HolderIdentity, ""); h != "" && h != c.identity && !c.expired(l) {
			return nil, nil, h, nil
		}
		if ptr.Deref(l.Spec.HolderIdentity, "") != c.identity {
			l.Spec.LeaseTransitions = ptr.To(ptr.Deref(l.Spec.LeaseTransitions, 0) + 1)
		}
		c.hold(l, target, now)
		// The update carries the resourceVersion: a replica that raced us
		// gets a conflict and defers.
		if l, err = leases.update(call, l); err != nil {
			if apierrors.IsConflict(err) {
				return nil, nil, "another replica", nil
			}
			return nil, nil, "", err
		}
	}
	held, lose := context.WithCancelCause(ctx)
	stop := make(chan struct{})
	done := make(chan struct{})
	go c.renew(held, lose, l, stop, done)
	var once sync.Once
	release := func() {
		once.Do(func() {
			close(stop)
			<-done
			lose(context.Canceled)
		})
	}
	return held, release, c.identity, nil
}

func (c *Cluster) hold(l *coordinationv1.Lease, target string, now metav1.MicroTime) {
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	l.Annotations[wellknown.PoolSwapTargetAnnotation] = target
	l.Spec.HolderIdentity = ptr.To(c.identity)
	l.Spec.LeaseDurationSeconds = ptr.To(int32(max(c.duration/time.Second, 1)))
	l.Spec.AcquireTime = &now
	l.Spec.RenewTime = &now
}

// renew keeps the Lease until stop, then clears the holder so the next swap
// need not wait out the duration. A renewal that finds another holder, or
// that fails for longer than the duration, loses the Lease.
func (c *Cluster) renew(held context.Context, lose context.CancelCauseFunc, l *coordinationv1.Lease, stop, done chan struct{}) {
	defer close(done)
	leases := c.leases(l.Namespace)
	bg := context.WithoutCancel(held)
	last := c.now()
	t := time.NewTicker(c.duration / 3)
	defer t.Stop()
	for {
		select {
		case <-stop:
			ctx, cancel := context.WithTimeout(bg, 5*time.Second)
			defer cancel()
			if cur, err := leases.get(ctx, l.Name); err == nil && ptr.Deref(cur.Spec.HolderIdentity, "") == c.identity {
				cur.Spec.HolderIdentity = nil
				cur.Spec.RenewTime = nil
				delete(cur.Annotations, wellknown.PoolSwapTargetAnnotation)
				_, _ = leases.update(ctx, cur)
			}
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(bg, c.duration/3)
		cur, err := leases.get(ctx, l.Name)
		if err == nil {
			if ptr.Deref(cur.Spec.HolderIdentity, "") != c.identity {
				cancel()
				lose(activation.ErrLeaseLost)
				<-stop
				return
			}
			cur.Spec.RenewTime = ptr.To(metav1.NewMicroTime(c.now()))
			_, err = leases.update(ctx, cur)
		}
		cancel()
		if err == nil {
			last = c.now()
		} else if c.now().Sub(last) >= c.duration {
			// Others may already have taken it over: stop acting on it.
			lose(fmt.Errorf("%w: renewal failed for %s: %w", activation.ErrLeaseLost, c.duration, err))
			<-stop
			return
		}
	}
}

// expired reports whether another replica's Lease went unrenewed for its
// duration, as this replica observed it.
func (c *Cluster) expired(l *coordinationv1.Lease) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	o, ok := c.observed[l.Name]
	if !ok || o.rv != l.ResourceVersion {
		c.observed[l.Name] = observation{rv: l.ResourceVersion, seen: c.now()}
		return false
	}
	d := time.Duration(ptr.Deref(l.Spec.LeaseDurationSeconds, 0)) * time.Second
	if d <= 0 {
		d = c.duration
	}
	return c.now().Sub(o.seen) >= d
}

// leaseClient reads and writes typed Leases through the dynamic client.
type leaseClient struct{ ri dynamic.ResourceInterface }

func (c *Cluster) leases(ns string) leaseClient {
	return leaseClient{c.dyn.Resource(Leases).Namespace(ns)}
}

func (lc leaseClient) get(ctx context.Context, name string) (*coordinationv1.Lease, error) {
	u, err := lc.ri.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return fromUnstructured(u)
}

func (lc leaseClient) create(ctx context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	return lc.write(l, func(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		return lc.ri.Create(ctx, u, metav1.CreateOptions{FieldManager: fieldManager})
	})
}

func (lc leaseClient) update(ctx context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	return lc.write(l, func(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		return lc.ri.Update(ctx, u, metav1.UpdateOptions{FieldManager: fieldManager})
	})
}

// write sends l with do and returns what the API server stored.
func (lc leaseClient) write(l *coordinationv1.Lease, do func(*unstructured.Unstructured) (*unstructured.Unstructured, error)) (*coordinationv1.Lease, error) {
	u, err := toUnstructured(l)
	if err != nil {
		return nil, err
	}
	if u, err = do(u); err != nil {
		return nil, err
	}
	return fromUnstructured(u)
}

const fieldManager = "llmkube-router-proxy"

func toUnstructured(l *coordinationv1.Lease) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(l)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion("coordination.k8s.io/v1")
	u.SetKind("Lease")
	return u, nil
}

func fromUnstructured(u *unstructured.Unstructured) (*coordinationv1.Lease, error) {
	l := &coordinationv1.Lease{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, l); err != nil {
		return nil, fmt.Errorf("lease %s: %w", u.GetName(), err)
	}
	return l, nil
}
