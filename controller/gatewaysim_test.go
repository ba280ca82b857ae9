package controller_test

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/llmkube/llmkube-compile/test/gatewayplayer"
)

// The suite plays the gateway controllers (Envoy Gateway, Envoy AI Gateway,
// agentgateway, the Inference Extension) that a cluster runs beside ours:
// it writes on every generated route, pool and policy the status those
// controllers write (gatewayplayer). A test chooses the verdict for one
// object with setVerdict.

// Verdicts a played gateway controller gives.
const (
	verdictAccept   = gatewayplayer.Accept
	verdictReject   = gatewayplayer.Reject
	verdictConflict = gatewayplayer.Conflict
	// verdictSilent writes nothing, as before a controller got to it.
	verdictSilent = "silent"
)

var verdicts sync.Map // "Kind ns/name" -> verdict

// setVerdict chooses how the played controller answers for one object.
func setVerdict(kind, ns, name, v string) { verdicts.Store(kind+" "+ns+"/"+name, v) }

// playGatewayControllers answers for every played object until ctx ends.
func playGatewayControllers(ctx context.Context, c client.Client) {
	for {
		for _, k := range gatewayplayer.Kinds {
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(k.GVK.GroupVersion().WithKind(k.GVK.Kind + "List"))
			if err := c.List(ctx, list); err != nil {
				continue // not served on this API server
			}
			for i := range list.Items {
				answer(ctx, c, &list.Items[i], k.GVK, k.Field)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// answer writes the verdict's status on obj unless it is already there for
// obj's generation.
func answer(ctx context.Context, c client.Client, obj *unstructured.Unstructured, gvk schema.GroupVersionKind, field string) {
	v := verdictAccept
	if s, ok := verdicts.Load(gvk.Kind + " " + obj.GetNamespace() + "/" + obj.GetName()); ok {
		v = s.(string)
	}
	if v == verdictSilent {
		return
	}
	conds := gatewayplayer.Conditions(v, field, obj.GetGeneration(), time.Now())
	// Idempotent: the same verdict for the same generation is written once.
	if current, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "status"); current != nil && gatewayplayer.Same(obj, field, conds) {
		return
	}
	gatewayplayer.SetStatus(obj, field, conds)
	_ = c.Status().Update(ctx, obj)
}
