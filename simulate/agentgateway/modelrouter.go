package agentgateway

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"unicode"
)

// ExtractModelFromPath is crates/llm/src/types/detect.rs
// extract_model_from_path: the model a Vertex (…/publishers/P/models/M:
// rawPredict, :streamRawPredict, :generateContent,
// :streamGenerateContent, :countTokens), Gemini (/v1beta/models/M:…) or
// Bedrock (/model/M/invoke, /invoke-with-response-stream, /converse,
// /converse-stream) path names, percent-decoded; "" for any other path or
// an unsafe name.
func ExtractModelFromPath(path string) string {
	var model string
	var ok bool
	switch {
	case strings.HasSuffix(path, ":streamRawPredict") || strings.HasSuffix(path, ":rawPredict"):
		if _, rest, found := strings.Cut(path, "/publishers/"); found {
			if _, rest, found = strings.Cut(rest, "/models/"); found {
				model, _, ok = strings.Cut(rest, ":")
			}
		}
	case strings.HasSuffix(path, ":streamGenerateContent") || strings.HasSuffix(path, ":generateContent") || strings.HasSuffix(path, ":countTokens"):
		scoped := path
		if _, rest, found := strings.Cut(path, "/publishers/"); found {
			scoped = rest
		}
		if _, rest, found := strings.Cut(scoped, "/models/"); found {
			model, _, ok = strings.Cut(rest, ":")
		}
	case strings.HasSuffix(path, "/invoke-with-response-stream") || strings.HasSuffix(path, "/invoke") ||
		strings.HasSuffix(path, "/converse-stream") || strings.HasSuffix(path, "/converse"):
		if _, rest, found := strings.Cut(path, "/model/"); found {
			for _, s := range []string{"/invoke-with-response-stream", "/invoke", "/converse-stream", "/converse"} {
				if r, cut := strings.CutSuffix(rest, s); cut {
					model, ok = r, true
					break
				}
			}
		}
	}
	if !ok {
		return ""
	}
	decoded, err := url.PathUnescape(model)
	if err != nil || !safeResourceName(decoded) {
		return ""
	}
	return decoded
}

// safeResourceName is crates/llm/src/lib.rs model_path
// is_safe_resource_name (75b4e6c): not empty, and every "/"-separated
// segment safe (safeSegment).
func safeResourceName(s string) bool {
	if s == "" {
		return false
	}
	for _, seg := range strings.Split(s, "/") {
		if !safeSegment(seg) {
			return false
		}
	}
	return true
}

// safeSegment is model_path is_safe_segment: not empty, not a dot segment,
// none of the characters that change a URL's meaning when it is parsed
// again upstream, no control character and no whitespace (Unicode, as
// Rust's char::is_control and char::is_whitespace).
func safeSegment(seg string) bool {
	if seg == "" || seg == "." || seg == ".." || strings.ContainsAny(seg, "/\\%?#<>\"`{}|^") {
		return false
	}
	for _, r := range seg {
		if unicode.IsControl(r) || unicode.Is(unicode.White_Space, r) {
			return false
		}
	}
	return true
}

func isModelListRequest(path string) bool {
	p := strings.TrimRight(path, "/")
	for _, base := range []string{"/v1/models", "/models"} {
		if p == base || strings.HasPrefix(p, base+"/") {
			return true
		}
	}
	return false
}

// modelNameMatches is model_name_matches: "*", "prefix*", "*suffix" or
// exact.
func modelNameMatches(pattern, model string) bool {
	switch {
	case pattern == "*":
		return true
	case strings.HasSuffix(pattern, "*"):
		return strings.HasPrefix(model, strings.TrimSuffix(pattern, "*"))
	case strings.HasPrefix(pattern, "*"):
		return strings.HasSuffix(model, strings.TrimPrefix(pattern, "*"))
	}
	return pattern == model
}

func (m *Model) routeModels(rt *httpRoute, name string) []*agwModel {
	var out []*agwModel
	for _, am := range m.models {
		if am.Meta.Namespace != rt.Meta.Namespace || (name != "*" && am.Meta.Name != name) {
			continue
		}
		for _, p := range am.Spec.ParentRefs {
			ns := p.Namespace
			if ns == "" {
				ns = am.Meta.Namespace
			}
			if p.Kind == "HTTPRoute" && p.Name == rt.Meta.Name && ns == rt.Meta.Namespace {
				out = append(out, am)
				break
			}
		}
	}
	return out
}

// listenerModels are the AgentgatewayModels attached directly (a Gateway
// parent, the default kind) to this Gateway's listener: by its sectionName
// or to every listener without one.
func (m *Model) listenerModels(listener string) []*agwModel {
	var out []*agwModel
	for _, am := range m.models {
		for _, p := range am.Spec.ParentRefs {
			ns := p.Namespace
			if ns == "" {
				ns = am.Meta.Namespace
			}
			if (p.Group != "" && p.Group != "gateway.networking.k8s.io") || (p.Kind != "" && p.Kind != "Gateway") ||
				p.Name != m.gw.Name || ns != m.gw.Namespace || (p.SectionName != "" && p.SectionName != listener) {
				continue
			}
			out = append(out, am)
			break
		}
	}
	return out
}

func modelAuthorized(f *flight, am *agwModel) bool {
	if am.Spec.Policies == nil || am.Spec.Policies.Authorization == nil {
		return true
	}
	return authorize(f, []*authorization{am.Spec.Policies.Authorization})
}

// transformModel applies the model's transformations of the body's model
// field (the provider request's, after the model router picked it): the
// value sent upstream, as agentgateway's policies.transformations sets it.
func transformModel(f *flight, am *agwModel) {
	if am.Spec.Policies == nil {
		return
	}
	for _, t := range am.Spec.Policies.Transformations {
		if t.Field != "model" {
			continue
		}
		if v, ok := f.cel().evalHeader(t.Expression); ok {
			f.out.UpstreamModel = v
			f.out.Tracef("AgentgatewayModel %s sets the body's model to %q (policies.transformations)", am.Meta.Name, v)
		}
	}
}

func public(am *agwModel) bool { return am.Spec.Visibility == "" || am.Spec.Visibility == "Public" }

// resolveModels is crates/agentgateway/src/llm/model_router.rs resolve for
// the AgentgatewayModels attached to the route (backendRef name "*": all
// of them, else the one named). It returns 200 with the outcome's Backend
// set ("model-list" for a model-list request, whose ids are traced), or the
// status of the router's direct response.
func (m *Model) resolveModels(f *flight, rt *httpRoute, name string) int {
	models := m.routeModels(rt, name)
	if direct := m.listenerModels(f.listener.Name); len(direct) > 0 {
		// Measured with agentgateway's controller at 75b4e6c (issue 51): a
		// model attached directly to the listener takes it; the route's
		// models get Accepted=False NoMatchingParent, the route
		// ResolvedRefs=False ModelRoutingConflict, its requests 404 and
		// the listener's model answers.
		var names []string
		for _, am := range direct {
			names = append(names, key(am.Meta))
		}
		f.out.Tracef("AgentgatewayModel %s attached directly to listener %s: the route's models are refused (NoMatchingParent, ModelRoutingConflict); only the listener's answer", strings.Join(names, ", "), f.listener.Name)
		models = direct
	}
	if isModelListRequest(f.req.Path) {
		var ids []string
		for _, am := range models {
			if public(am) && modelAuthorized(f, am) {
				ids = append(ids, am.modelName())
			}
		}
		f.out.Backend = "model-list"
		f.out.Tracef("model router: model list %v", ids)
		return http.StatusOK
	}
	requested := ExtractModelFromPath(f.req.Path)
	if requested != "" {
		f.out.Tracef("model router: model %q from the path", requested)
	} else {
		var body map[string]any
		if err := json.Unmarshal(f.body, &body); err != nil {
			f.out.Tracef("model router: body is not JSON: 400")
			return http.StatusBadRequest
		}
		s, ok := body["model"].(string)
		if !ok {
			f.out.Tracef("model router: body has no string model: 400")
			return http.StatusBadRequest
		}
		requested = s
		f.out.Tracef("model router: model %q from the body", requested)
	}
	found := false
	for _, am := range models {
		if !public(am) || !modelNameMatches(am.modelName(), requested) {
			continue
		}
		found = true
		if modelAuthorized(f, am) {
			f.out.Backend = "AgentgatewayModel/" + am.Meta.Name
			transformModel(f, am)
			return http.StatusOK
		}
	}
	if found {
		f.out.Tracef("model router: %q denied by its authorization: 403 (model_authorization_denied)", requested)
		return http.StatusForbidden
	}
	f.out.Tracef("model router: no model %q: 404 (model_not_found)", requested)
	return http.StatusNotFound
}
