package targets

import (
	"fmt"

	"github.com/llmkube/llmkube-compile/capability"
	"github.com/llmkube/llmkube-compile/ir"
)

// Capabilities returns the capability tables of the registered planes, for
// compiler.Options.Planes; a plane this build does not hold has an empty
// table.
func (r *Registry) Capabilities() capability.Tables {
	return func(dp ir.DataPlane) capability.Table {
		if t, ok := r.targets[dp]; ok {
			return t.Capabilities()
		}
		return capability.Table{}
	}
}

// ProxyWorkloadFields are the rows every plane that does not run the
// router-proxy shares: its workload and its Service, ignored. withTimeouts
// adds the proxy's timeouts, for a plane that does not read them either.
func ProxyWorkloadFields(dp ir.DataPlane, withTimeouts bool) []capability.Row {
	names := []string{"replicas", "image", "imagePullSecrets", "resources", "serviceName", "nodeSelector", "tolerations", "affinity",
		"topologySpreadConstraints", "runtimeClassName", "podLabels", "podAnnotations", "revisionHistoryLimit", "drainTimeout", "podDisruptionBudget"}
	if withTimeouts {
		names = append(names, "responseHeaderTimeout", "streamIdleTimeout", "quarantineDuration")
	}
	var out []capability.Row
	for _, n := range names {
		out = append(out, capability.Row{Path: "spec.proxy." + n, Verdict: capability.Ignored,
			Message: fmt.Sprintf("spec.proxy.%s configures the router-proxy, which dataPlane %s does not run; it is ignored", n, dp)})
	}
	return append(out, capability.Row{Path: "spec.endpoint", Verdict: capability.Ignored,
		Message: fmt.Sprintf("spec.endpoint configures the router-proxy's Service, which dataPlane %s does not create; it is ignored", dp)})
}

// AnotherPlanesField is the row of a field that only dataPlane reader
// reads (spec.gatewayRef, spec.agentGatewayRef): dataPlane dp ignores it,
// and setting it earns a FieldIgnored warning that says so and names the
// plane that reads it. name and does are the field in the message and what
// it does there: "spec.gatewayRef", "names the Envoy AI Gateway the router
// attaches to".
func AnotherPlanesField(dp ir.DataPlane, path, name, does string, reader ir.DataPlane) capability.Row {
	return capability.Row{Path: path, Verdict: capability.Ignored,
		Message: fmt.Sprintf("%s %s on dataPlane %s; dataPlane %s does not read it, so it is ignored", name, does, reader, dp)}
}

// GatewayRefRow and AgentGatewayRefRow are the rows of the references to
// the gateway another plane attaches the router to, on dataPlane dp.
func GatewayRefRow(dp ir.DataPlane) capability.Row {
	return AnotherPlanesField(dp, "spec.gatewayRef", "spec.gatewayRef", "names the Envoy AI Gateway the router attaches to", ir.DataPlaneGateway)
}

func AgentGatewayRefRow(dp ir.DataPlane) capability.Row {
	return AnotherPlanesField(dp, "spec.agentGatewayRef", "spec.agentGatewayRef", "names the agentgateway Gateway the router attaches to", ir.DataPlaneAgentGateway)
}

// EndpointPickerRow is the row of a backend's endpointPicker, which only
// the AgentGateway plane's InferencePools read, on dataPlane dp.
func EndpointPickerRow(dp ir.DataPlane) capability.Row {
	return AnotherPlanesField(dp, "spec.backends[*].endpointPicker", "endpointPicker", "selects the endpoint picker of the backend's InferencePool", ir.DataPlaneAgentGateway)
}

// Reasons more than one plane's emitter gives.
const (
	// ReasonInternalError: the emitter produced what it cannot encode or
	// check, a bug of the compiler, never the input's fault.
	ReasonInternalError = "InternalError"
	// ReasonGatewayRoutesOverlap: two routers on one gateway listener whose
	// routes meet the same request (Together).
	ReasonGatewayRoutesOverlap = "GatewayRoutesOverlap"
	// ReasonUpstreamModelAssumed: a gateway plane sends a local backend the
	// model name the compiler assumed (AssumedUpstreamModel), which a
	// runtime that checks names may not serve.
	ReasonUpstreamModelAssumed = "UpstreamModelAssumed"
)

// AssumedUpstreamModel is the warning (ReasonUpstreamModelAssumed, at
// spec.backends[i].inferenceServiceRef.name) a gateway plane gives for a
// local backend whose upstream model the compiler assumed
// (ir.UpstreamModelAssumed) and whose runtime refuses a name it does not
// serve (vLLM, llama.cpp's router mode): unlike the router-proxy, which
// reads the served name from the backend's /v1/models, a gateway plane
// sends the assumed name as it is. ok is false when there is nothing to say.
func AssumedUpstreamModel(dp ir.DataPlane, b *ir.Backend) (msg string, ok bool) {
	if b.Local == nil || b.UpstreamModel.Known() || (b.Local.Runtime != "vllm" && b.Local.Runtime != "llamacpp-router") {
		return "", false
	}
	return fmt.Sprintf("dataPlane %s sends backend %q the model name %q (InferenceService %s's modelRef, or its name), but its %s runtime serves the name it was started with, which the InferenceService does not say; a request under another name is refused (vLLM: 404 \"The model ... does not exist\"). Add --served-model-name <name> to the InferenceService's spec.extraArgs, or use dataPlane Proxy, which reads the served name from the backend's /v1/models",
		dp, b.Name, b.UpstreamModel.Name, b.Local.InferenceService, b.Local.Runtime), true
}

// UpstreamQuotaRows are the rows of the router-proxy's upstream quota
// holds (spec.proxy.rateLimitHold, quotaExhaustedHold) on dataPlane dp,
// which holds no backend for its provider's quota: onLimit says what dp
// does with a provider's 429 instead (docs/upstream-quota.md).
func UpstreamQuotaRows(dp ir.DataPlane, onLimit string) []capability.Row {
	var out []capability.Row
	for _, n := range []string{"rateLimitHold", "quotaExhaustedHold"} {
		out = append(out, capability.Row{Path: "spec.proxy." + n, Verdict: capability.Ignored,
			Message: fmt.Sprintf("spec.proxy.%s is how long the router-proxy skips a backend its provider rate limited or whose quota is spent; on dataPlane %s %s, and no backend is held, so it is ignored", n, dp, onLimit)})
	}
	return out
}

// Reasons of the rows every plane that does not run the router-proxy shares.
const (
	ReasonMCPServerRequiresProxy  = "MCPServerRequiresProxy"
	ReasonClassifierRequiresProxy = "ClassifierRequiresProxy"
)

// ProxyOnlyRows are the rows every plane that does not run the
// router-proxy shares: what only the router-proxy's own request handling
// can do, refused.
func ProxyOnlyRows(dp ir.DataPlane) []capability.Row {
	classifier := func(mode string) capability.Row {
		return capability.Row{Path: "spec.policy.classification.mode", Value: mode, Verdict: capability.Refused, Reason: ReasonClassifierRequiresProxy,
			Message: fmt.Sprintf("dataPlane %s cannot run the content classifier of classification mode {value} (its content guards can only block or mask a request, not route it to local backends); set dataPlane: Proxy, or classification mode header-only with clients that send the {spec.policy.classification.headerKey} header", dp)}
	}
	return []capability.Row{
		{Path: "spec.mcpServer.enabled", Value: "true", Verdict: capability.Refused, Reason: ReasonMCPServerRequiresProxy,
			Message: fmt.Sprintf("dataPlane %s cannot serve this router as an MCP server (its MCP gateway aggregates MCP servers' tools; it cannot offer the router's models as tools under its rules, allowlists and budgets); set dataPlane: Proxy, or mcpServer.enabled: false", dp)},
		classifier("detector"),
		classifier("hybrid"),
	}
}
