package aigateway_test

import (
	"bytes"
	"encoding/json"
	"fmt"

	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/llmkube/llmkube-compile/compiler"
	"github.com/llmkube/llmkube-compile/pipeline"
	"github.com/llmkube/llmkube-compile/simulate/envoyai"
	"github.com/llmkube/llmkube-compile/targets/builtin"
	"github.com/llmkube/llmkube-compile/test/testenv"
)

// egctl is Envoy Gateway's CLI at the pinned version (make egctl; make test
// passes it as EGCTL). Without it the test fails: it never skips.
func egctl(t *testing.T) string {
	t.Helper()
	return testenv.MakeVar(t, "EGCTL", "egctl")
}

// TestEnvoyGatewayTranslatorAcceptsEveryGatewayCase runs Envoy Gateway's
// own translator (egctl x translate, v1.9.1) on every Gateway-plane case:
// the routers' objects, the HTTPRoutes the AI Gateway synthesizes from them
// (simulate/envoyai.Synthesize) and a Gateway for each gatewayRef. Every
// route and policy must be Accepted with its references resolved, and no
// route may answer 500 (what Envoy Gateway does with a route whose policy it
// refused: a SecurityPolicy refused for its provider name did exactly that).
func TestEnvoyGatewayTranslatorAcceptsEveryGatewayCase(t *testing.T) {
	bin := egctl(t)
	inputs, err := filepath.Glob("../../testdata/gateway-*/input.yaml")
	require.NoError(t, err)
	inputs = append(inputs, "../../examples/shared-gateway.yaml", "../../examples/foreign-route-on-gateway.yaml", "../../examples/hostnames-on-one-gateway.yaml")
	for _, in := range inputs {
		name := filepath.Base(filepath.Dir(in))
		if name == "examples" {
			name = filepath.Base(in)
		}
		t.Run(name, func(t *testing.T) {
			file := writeObjects(t, gatewayInput(t, in))

			out, err := exec.Command(bin, "x", "translate", "--from", "gateway-api", "--to", "gateway-api", "-o", "yaml", "-f", file).CombinedOutput()
			require.NoError(t, err, "%s", out)
			var res map[string]any
			require.NoError(t, yaml.Unmarshal(out, &res), "%s", out)
			checked := 0
			// Envoy Gateway keeps one ClientTrafficPolicy per Gateway: with
			// several authenticated routers (on disjoint hostnames) the
			// others are Conflicted, which loses nothing while the one in
			// force removes the same team header (sharedClientPolicy).
			var ctpInForce, ctpConflicted [][]string
			for _, list := range res {
				items, _ := list.([]any)
				for _, it := range items {
					m, _ := it.(map[string]any)
					u := &unstructured.Unstructured{Object: m}
					kind := u.GetKind()
					if kind == "GatewayClass" || kind == "Gateway" || kind == "Backend" || kind == "HTTPRouteFilter" {
						continue
					}
					field := "ancestors"
					if kind == "HTTPRoute" {
						field = "parents"
					}
					entries, _, _ := unstructured.NestedSlice(m, "status", field)
					assert.NotEmpty(t, entries, "%s %s/%s has no status from Envoy Gateway", kind, u.GetNamespace(), u.GetName())
					for _, e := range entries {
						conds, _, _ := unstructured.NestedSlice(e.(map[string]any), "conditions")
						for _, c := range conds {
							cm := c.(map[string]any)
							if kind == "ClientTrafficPolicy" && cm["type"] == "Accepted" {
								removes, _, _ := unstructured.NestedStringSlice(m, "spec", "headers", "earlyRequestHeaders", "remove")
								if cm["status"] == "True" {
									ctpInForce = append(ctpInForce, removes)
								} else if cm["reason"] == "Conflicted" {
									ctpConflicted = append(ctpConflicted, removes)
									continue
								}
							}
							if cm["type"] == "Accepted" || cm["type"] == "ResolvedRefs" {
								assert.Equal(t, "True", cm["status"], "%s %s/%s: %s %s: %s", kind, u.GetNamespace(), u.GetName(), cm["type"], cm["reason"], cm["message"])
							}
						}
					}
					checked++
				}
			}
			assert.Positive(t, checked)
			if len(ctpConflicted) > 0 {
				require.Len(t, ctpInForce, 1, "one ClientTrafficPolicy in force")
				for _, c := range ctpConflicted {
					assert.Subset(t, ctpInForce[0], c, "a Conflicted ClientTrafficPolicy removes what the one in force removes")
				}
			}

			for _, r := range routes(xdsRoutes(t, bin, file)) {
				if dr, ok := r["directResponse"].(map[string]any); ok {
					assert.NotEqual(t, float64(500), dr["status"], "route %v answers 500", r["name"])
				}
			}
		})
	}
}

// gatewayInput compiles every router of an input for the Gateway plane and
// adds what a cluster holds beside them: a GatewayClass, the Gateways, the
// AI Gateway's HTTPRoutes and any foreign gateway objects of the input.
func gatewayInput(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	in := &compiler.Inputs{}
	require.False(t, in.Decode(filepath.Base(path), data).HasErrors())
	objs, diags := pipeline.Run(in, builtin.Registry(), pipeline.Options{})
	require.False(t, diags.HasErrors(), "%v", diags.Err())
	var foreign []*unstructured.Unstructured
	for _, doc := range bytes.Split(data, []byte("\n---")) {
		var m map[string]any
		if yaml.Unmarshal(doc, &m) == nil && m != nil {
			if k, _ := m["kind"].(string); k == "AIGatewayRoute" || k == "AIServiceBackend" || k == "Backend" {
				foreign = append(foreign, &unstructured.Unstructured{Object: m})
			}
		}
	}
	all := append(foreign, objs...)
	synth, err := envoyai.Synthesize(all)
	require.NoError(t, err)
	gateways := map[string]bool{}
	for _, o := range all {
		if o.GetKind() != "AIGatewayRoute" {
			continue
		}
		parents, _, _ := unstructured.NestedSlice(o.Object, "spec", "parentRefs")
		for _, p := range parents {
			pm := p.(map[string]any)
			ns, _ := pm["namespace"].(string)
			if ns == "" {
				ns = o.GetNamespace()
			}
			gateways[ns+"/"+pm["name"].(string)] = true
		}
	}
	out := []*unstructured.Unstructured{{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass", "metadata": map[string]any{"name": "eg"},
		"spec": map[string]any{"controllerName": "gateway.envoyproxy.io/gatewayclass-controller"}}}}
	var keys []string
	for k := range gateways {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ns, name, _ := strings.Cut(k, "/")
		out = append(out, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway", "metadata": map[string]any{"name": name, "namespace": ns},
			"spec": map[string]any{"gatewayClassName": "eg", "listeners": []any{map[string]any{
				"name": "http", "protocol": "HTTP", "port": int64(80), "allowedRoutes": map[string]any{"namespaces": map[string]any{"from": "All"}}}}}}})
	}
	out = append(out, synth...)
	for _, o := range all {
		switch o.GetKind() {
		case "AIGatewayRoute", "AIServiceBackend", "BackendSecurityPolicy":
			// the AI Gateway's own kinds: Envoy Gateway reads what it synthesizes
		default:
			out = append(out, o)
		}
	}
	return out
}

// writeObjects writes objs to a YAML file of the test and returns its path.
func writeObjects(t *testing.T, objs []*unstructured.Unstructured) string {
	t.Helper()
	var buf bytes.Buffer
	for _, o := range objs {
		b, err := yaml.Marshal(o.Object)
		require.NoError(t, err)
		buf.WriteString("---\n")
		buf.Write(b)
	}
	file := filepath.Join(t.TempDir(), "in.yaml")
	require.NoError(t, os.WriteFile(file, buf.Bytes(), 0o600))
	return file
}

// xdsRoutes is Envoy Gateway's translation of the Gateway API objects in
// file to its xDS route configuration, as decoded JSON.
func xdsRoutes(t *testing.T, bin, file string) any {
	t.Helper()
	out, err := exec.Command(bin, "x", "translate", "--from", "gateway-api", "--to", "xds", "-t", "route", "-o", "json", "-f", file).CombinedOutput()
	require.NoError(t, err, "%s", out)
	var xds any
	require.NoError(t, json.Unmarshal(out, &xds), "%s", out)
	return xds
}

// routes are every route of an xDS route dump.
func routes(v any) []map[string]any {
	var out []map[string]any
	eachIn(v, "routes", func(r map[string]any) { out = append(out, r) })
	return out
}

// eachIn calls fn with every object of every list named key in the JSON
// value v, at any depth.
func eachIn(v any, key string, fn func(map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		if list, ok := x[key].([]any); ok {
			for _, e := range list {
				if m, ok := e.(map[string]any); ok {
					fn(m)
				}
			}
		}
		for _, e := range x {
			eachIn(e, key, fn)
		}
	case []any:
		for _, e := range x {
			eachIn(e, key, fn)
		}
	}
}

// TestEnvoyGatewayTranslatorGivesEachHostnameAVirtualHost: Envoy Gateway's
// own translator puts two authenticated routers with disjoint
// gatewayRef.hostnames in virtual hosts of their own, each holding only its
// router's routes, every one with its JWT and authorization: the basis for
// accepting authenticated routers on one Gateway (simulate/envoyai's
// virtualHost models the same selection).
func TestEnvoyGatewayTranslatorGivesEachHostnameAVirtualHost(t *testing.T) {
	bin := egctl(t)
	file := writeObjects(t, gatewayInput(t, "../../examples/hostnames-on-one-gateway.yaml"))
	hosts := map[string][]string{} // domain -> route names
	eachIn(xdsRoutes(t, bin, file), "virtualHosts", func(vm map[string]any) {
		domains, _ := vm["domains"].([]any)
		require.Len(t, domains, 1, "%v", vm["name"])
		for _, r := range routes(vm) {
			hosts[domains[0].(string)] = append(hosts[domains[0].(string)], r["name"].(string))
			filters, _ := r["typedPerFilterConfig"].(map[string]any)
			assert.Contains(t, filters, "envoy.filters.http.jwt_authn", r["name"])
			assert.Contains(t, filters, "envoy.filters.http.rbac", r["name"])
		}
	})
	require.Len(t, hosts, 2, "%v", hosts)
	for domain, router := range map[string]string{"research.models.example.com": "ml/research", "*.support.example.com": "ml/support"} {
		require.NotEmpty(t, hosts[domain], domain)
		for _, name := range hosts[domain] {
			assert.Contains(t, name, "httproute/"+router+"/", "virtual host %s holds only %s's routes", domain, router)
		}
	}
}

// TestEnvoyGatewayTranslatorKeepsTheAudiences: Envoy Gateway's translator
// (egctl x translate to xDS) carries policy.auth.jwt.audiences of
// testdata/gateway-jwt-allowlists into the jwt_authn provider of the
// router's listener, so Envoy refuses a token for another audience.
func TestEnvoyGatewayTranslatorKeepsTheAudiences(t *testing.T) {
	bin := egctl(t)
	file := writeObjects(t, gatewayInput(t, "../../testdata/gateway-jwt-allowlists/input.yaml"))
	out, err := exec.Command(bin, "x", "translate", "--from", "gateway-api", "--to", "xds", "-t", "listener", "-o", "json", "-f", file).CombinedOutput()
	require.NoError(t, err, "%s", out)
	var xds any
	require.NoError(t, json.Unmarshal(out, &xds), "%s", out)
	var audiences [][]any
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if p, ok := x["providers"].(map[string]any); ok {
				for _, prov := range p {
					if pm, ok := prov.(map[string]any); ok && pm["issuer"] == "https://issuer.example/realms/lab" {
						auds, _ := pm["audiences"].([]any)
						audiences = append(audiences, auds)
					}
				}
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(xds)
	require.NotEmpty(t, audiences, "no jwt_authn provider of the router's issuer in the xDS listeners:\n%s", out)
	for _, a := range audiences {
		assert.Equal(t, []any{"https://models.example.com"}, a)
	}
}

// TestEnvoyGatewayTranslatorHoldsAllowlistsOnTheServingRule: in Envoy
// Gateway's own translation of testdata/gateway-allowlist-serving, the
// routes of the rules whose backends billing may not use carry an rbac
// that allows clinical only, while the default route's allows billing too:
// a rule's SecurityPolicy is in force on that rule, instead of the route's.
func TestEnvoyGatewayTranslatorHoldsAllowlistsOnTheServingRule(t *testing.T) {
	bin := egctl(t)
	file := writeObjects(t, gatewayInput(t, "../../testdata/gateway-allowlist-serving/input.yaml"))
	allows := map[string][]string{} // xDS route name -> the Allow rules of its rbac
	for _, r := range routes(xdsRoutes(t, bin, file)) {
		name, _ := r["name"].(string)
		rbac, _, _ := unstructured.NestedMap(r, "typedPerFilterConfig", "envoy.filters.http.rbac")
		require.NotNil(t, rbac, "route %s has no rbac", name)
		eachIn(rbac, "matchers", func(m map[string]any) {
			if a, _, _ := unstructured.NestedString(m, "onMatch", "action", "name"); a != "" {
				allows[name] = append(allows[name], a)
			}
		})
	}
	rule := func(i int) []string { return allows[fmt.Sprintf("httproute/hospital/hospital/rule/%d/match/0/*", i)] }
	assert.Equal(t, []string{"allow-clinical-0"}, rule(0), "phi-stays-local: its only backend is the clinical model (%v)", allows)
	assert.Equal(t, []string{"allow-clinical-0"}, rule(1), "pii-local-pair may fail over to the clinical model")
	assert.Equal(t, []string{"allow-clinical-0", "allow-billing-1"}, rule(2), "the default route serves llama-3")
}
