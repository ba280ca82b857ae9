package simulate

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/llmkube/llmkube-compile/ir"
)

// Compiled is one router as its plane's target compiled it: what a plane's
// model is built from.
type Compiled struct {
	Key     string // namespace/name
	IR      *ir.Router
	Objects []*unstructured.Unstructured
}

// Served is how a plane's model serves one router.
type Served struct {
	Serve func(Request) Outcome
	// BackendID names a backend of the router as the model's Outcome does;
	// Name maps an Outcome's backend back to a router key and backend
	// ("" router: not one of the routers, a foreign route's).
	BackendID func(backend string) string
	Name      func(id string) (router, backend string)
	// Rule maps the model's rule label to the ModelRouter's vocabulary (a
	// spec rule's name, or "(default)"); nil for the common mapping.
	Rule func(string) string
	// Host is the Host a request for the router carries by default; "" when
	// it claims every host.
	Host string
}

// PlaneModel is a data plane's request-path model as `llmkube-compile test`
// (package routingtest) drives it. Each plane's model package declares its
// own (PlaneModel()); simulate/builtin lists those of this build, one line
// per plane, as targets/builtin lists the targets.
type PlaneModel struct {
	DataPlane ir.DataPlane
	// Serve builds the model of every router compiled for the plane, on
	// shared gateways, with the input's foreign objects (another team's
	// routes and policies), by router key.
	Serve func(routers []Compiled, foreign []*unstructured.Unstructured) (map[string]Served, error)
	// ModelsRefusals is true when the model reproduces its refusals' bodies
	// and headers (the router-proxy runs itself).
	ModelsRefusals bool
	// DownIsNotReady: the plane fails over on readiness, not per request,
	// so a backend down is its InferenceService not ready and the router
	// is compiled again so (as the controller would).
	DownIsNotReady bool
}

// DefaultRule is how a request served by the default route, or by
// BackendNameMatch, is named in results and expectations: the label the
// router-proxy gives it.
const DefaultRule = "(default)"

// DefaultHost is the Host a request for a router with these hostnames
// carries unless the case sets one: the first ("*.x" as "test.x"), or ""
// (the models' default) when it claims every host.
func DefaultHost(hostnames []string) string {
	if len(hostnames) == 0 {
		return ""
	}
	return strings.Replace(hostnames[0], "*.", "test.", 1)
}

// ByGateway groups routers by the gateway they attach to
// (ir.Router.AttachedGateway; a router on none is left out), in the order
// the gateways first appear: a gateway plane's model holds every router on
// it.
func ByGateway(routers []Compiled) [][]Compiled {
	type key struct{ ns, name string }
	at := map[key]int{}
	var out [][]Compiled
	for _, c := range routers {
		ns, name, ok := c.IR.AttachedGateway()
		if !ok {
			continue
		}
		k := key{ns, name}
		i, seen := at[k]
		if !seen {
			i = len(out)
			at[k] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], c)
	}
	return out
}

// Names maps a model's backend ids to the router key and backend they
// stand for.
type Names map[string][2]string

// Name is Served.Name: an id not in the map is a foreign route's ("" router).
func (n Names) Name(id string) (router, backend string) {
	if v, ok := n[id]; ok {
		return v[0], v[1]
	}
	return "", id
}
