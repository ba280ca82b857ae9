package aigateway

import (
	"fmt"
	"math/big"
	"strings"
	"time"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/internal/naming"
)

// aiRoutes is what the AIGatewayRoute step hands the policies: the
// routes' names in order (the HTTPRoutes the AI Gateway generates carry
// them, so policies target those), the route of each generated rule, and
// the USD cost the routes declare (nil: none), which the budgets count in.
type aiRoutes struct {
	names  []string
	byRule map[string]string // generated rule name -> route name
	usd    *usdCost
}

// of is the route holding generated rule g.
func (rt aiRoutes) of(g *genRule) string {
	if name, ok := rt.byRule[g.name]; ok {
		return name
	}
	return rt.names[0]
}

// routesFor emits one AIGatewayRoute per chunk of the plan.
func (e *emitter) routesFor(plan routePlan, bk aiBackends) aiRoutes {
	gw := e.r.Gateway
	ns := gwapiv1Namespace(gw.Namespace)
	costs, usd := e.requestCosts(bk)
	out := aiRoutes{byRule: map[string]string{}, usd: usd}
	for ci, chunk := range plan.chunks {
		name := naming.GatewayRouteName(e.r.Name, ci)
		out.names = append(out.names, name)
		spec := AIGatewayRouteSpec{
			ParentRefs:      []gwParentRef{{Group: &gatewayAPIGrp, Kind: gwKind("Gateway"), Name: gwObjectName(gw.Name), Namespace: ns}},
			Hostnames:       hostnames(gw.Hostnames),
			LLMRequestCosts: costs,
		}
		for _, g := range chunk {
			if _, ok := out.byRule[g.name]; !ok {
				out.byRule[g.name] = name
			}
			rr := RouteRule{Name: g.name, BackendRefs: g.refs, Timeouts: &RouteTimeouts{Request: "0s"}}
			for _, m := range g.matches {
				rr.Matches = append(rr.Matches, RouteMatch{Headers: m.headers()})
			}
			if si := e.r.Timeouts.StreamIdle; si > 0 {
				rr.StreamIdleTimeout = e.duration(diag.Spec("proxy", "streamIdleTimeout"), si)
			}
			spec.Rules = append(spec.Rules, rr)
		}
		if len(spec.Rules) == 0 {
			// A router whose every rule can never match and that has no
			// default still gets its route: the gateway answers 404.
			spec.Rules = []RouteRule{}
		}
		e.add(&AIGatewayRoute{ObjectMeta: e.meta(name), Spec: spec}, gvkRoute)
	}
	if si := e.r.Timeouts.StreamIdle; si > 0 {
		for _, g := range plan.rules {
			if d, ok := parseGw(g.headerTimeout); ok && d > si {
				e.diags.ErrorAt(diag.Spec("proxy", "streamIdleTimeout"), ReasonStreamIdleBelowHeaderTimeout,
					"streamIdleTimeout %s is shorter than the %s response-header timeout of %s; the gateway's idle timer also runs before the first response byte, so it would cut requests the router-proxy lets wait. Raise streamIdleTimeout to at least %s or set it to 0s",
					si, d, g.label, d)
				break
			}
		}
	}
	return out
}

// The AIGatewayRoute's Gateway API values.

type gwParentRef = gwapiv1.ParentReference

func gwKind(k string) *gwapiv1.Kind            { v := gwapiv1.Kind(k); return &v }
func gwObjectName(n string) gwapiv1.ObjectName { return gwapiv1.ObjectName(n) }

// hostnames are the router's gatewayRef.hostnames as Gateway API
// hostnames (nil: every host).
func hostnames(hs []string) []gwapiv1.Hostname {
	var out []gwapiv1.Hostname
	for _, h := range hs {
		out = append(out, gwapiv1.Hostname(h))
	}
	return out
}
func gwapiv1Namespace(ns string) *gwapiv1.Namespace {
	if ns == "" {
		return nil
	}
	v := gwapiv1.Namespace(ns)
	return &v
}

func parseGw(s string) (time.Duration, bool) {
	if s == "" {
		return 0, false
	}
	d, err := time.ParseDuration(s)
	return d, err == nil
}

// Cost metadata the AI Gateway publishes under io.envoy.ai_gateway.
const (
	costNamespace  = "io.envoy.ai_gateway"
	tokenCostKey   = "llmkube_total_tokens"
	usdCostKeyBase = "llmkube_usd_e"
)

// usdCost is the CEL cost of a request in units of 10^-scale USD.
type usdCost struct {
	scale int
	key   string
	expr  string
}

// requestCosts declares the costs the budgets read, and the USD one (nil
// when no budget caps dollars).
func (e *emitter) requestCosts(bk aiBackends) ([]LLMRequestCost, *usdCost) {
	var tokens, usd bool
	for _, b := range e.r.Policy.Budgets {
		tokens = tokens || b.MaxTokens > 0
		usd = usd || b.MaxUSD != ""
	}
	var out []LLMRequestCost
	if tokens {
		out = append(out, LLMRequestCost{MetadataKey: tokenCostKey, Type: "TotalToken"})
	}
	var c *usdCost
	if usd {
		c = e.usdCostExpr(bk)
		out = append(out, LLMRequestCost{MetadataKey: c.key, Type: "CEL", CEL: c.expr})
	}
	return out, c
}

// decimal parses an exact decimal string.
func decimal(s string) (*big.Rat, int) {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return new(big.Rat), 0
	}
	dec := 0
	if i := strings.IndexByte(s, '.'); i >= 0 {
		dec = len(s) - i - 1
	}
	return r, dec
}

// usdCostExpr builds the CEL cost of a request from each backend's
// costPerMillionTokens: per token, a price of P USD per million tokens is
// P·10^(scale-6) units of 10^-scale USD, an integer when scale is 6 plus the
// most decimals any price has.
func (e *emitter) usdCostExpr(bk aiBackends) *usdCost {
	scale := 6
	for i := range e.r.Backends {
		if c := e.r.Backends[i].Cost; c != nil {
			for _, p := range []string{c.PromptUSD, c.CompletionUSD} {
				if _, d := decimal(p); 6+d > scale {
					scale = 6 + d
				}
			}
		}
	}
	unit := func(p string) string {
		if p == "" {
			return "0u"
		}
		r, _ := decimal(p)
		r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale-6)), nil)))
		return r.Num().String() + "u"
	}
	expr := "0u"
	for i := len(e.r.Backends) - 1; i >= 0; i-- {
		b := &e.r.Backends[i]
		if b.Cost == nil {
			continue
		}
		expr = fmt.Sprintf("%s ? input_tokens * %s + output_tokens * %s : %s",
			backendIs(e.r.Namespace, bk[b.Name].name), unit(b.Cost.PromptUSD), unit(b.Cost.CompletionUSD), expr)
	}
	return &usdCost{scale: scale, key: fmt.Sprintf("%s%d", usdCostKeyBase, scale), expr: expr}
}

// backendIs is the CEL test that the request went to the AIServiceBackend
// ns/name. At run time Envoy AI Gateway's extproc (v0.3 through v1.1) sets
// `backend` to the per-route-rule name
// "<namespace>/<AIServiceBackend>/route/<route>/rule/<i>/ref/<j>"
// (internalapi.PerRouteRuleRefBackendName), not the "<name>.<namespace>"
// of the API's doc comment; comparing with the latter priced every request
// at 0. The prefix, with its closing "/", names exactly one backend; the
// documented form is kept for versions that pass it.
func backendIs(ns, name string) string {
	return fmt.Sprintf("(backend.startsWith(%q) || backend == %q)", ns+"/"+name+"/", name+"."+ns)
}
