// Package agentgateway is an executable model of one agentgateway Gateway:
// it reads the objects every router on that Gateway generated (HTTPRoutes,
// AgentgatewayPolicies, AgentgatewayModels, InferencePools) plus any foreign
// objects of those kinds, and answers a simulate.Request with the
// simulate.Outcome agentgateway would give.
//
// It follows agentgateway at commit 75b4e6c (the commit the CRDs in
// ../shared/crds/agentgateway come from; see shared/crds/SOURCES.md), file
// by file:
//
//   - Listener and route selection: crates/agentgateway/src/http/route.rs
//     (select_best_route, matches_request) and the route ordering of
//     crates/agentgateway/src/types/agent.rs (RouteSet::insert,
//     compare_route: exact path, longer prefix, method, more headers, more
//     query matches, then the route key "<namespace>/<name>.<rule index,
//     two digits>" alphabetically; HostnameMatch::all_matches for the host
//     levels). Route keys come from the controller's
//     controller/pkg/agentgateway/utils/utils.go InternalRouteRuleKey.
//     Header matches: types/agent.rs HeaderValueMatch::matches (an exact
//     match compares bytes; a regular expression must span the whole value
//     and never matches a value that is not visible ASCII).
//   - Policy phases and merging: crates/agentgateway/src/store/binds.rs
//     gateway_policies (PreRouting: listener before Gateway, the first
//     transformation wins, set_if_unset) and route_policies (PostRouting:
//     Gateway, listener, route, rule; a later field replaces an earlier one
//     unless an earlier policy set strategy.inheritance Override; every
//     Authorization is kept until an Override one, then no more);
//     crates/agentgateway/src/store/policy.rs merge_with_inheritance.
//   - The request path: crates/agentgateway/src/proxy/httpproxy.rs
//     (PreRouting policies, route selection, then jwt, authorization,
//     transformation, direct response, then NoValidBackends (500) when the
//     rule has no backend).
//   - Authorization: crates/agentgateway/src/http/authorization.rs
//     RuleSets::validate (any Deny denies; every Require must hold; then any
//     Allow allows; with Allow rules present and none matching, deny). An
//     expression that fails to evaluate is false.
//   - The model router: crates/agentgateway/src/llm/model_router.rs
//     (model list on /v1/models and /models filtered by each model's
//     authorization; the requested model from the path first,
//     crates/llm/src/types/detect.rs extract_model_from_path, then the JSON
//     body; the first model whose match.model matches and whose
//     authorization allows; 404 model_not_found, 403
//     model_authorization_denied, 400 for a body without a string model).
//   - A foreign AgentgatewayModel attached directly to a listener (a
//     Gateway parent) takes the listener from a route's model backend: the
//     route's models are refused (NoMatchingParent, ModelRoutingConflict)
//     and only the listener's models answer; measured with agentgateway's
//     controller at 75b4e6c (issue 51), not read from a source file.
//   - CEL: the variables crates/agentgateway/src/cel/types.rs Executor
//     declares (request with body as bytes, jwt, source, llm, ...) and
//     json(string|bytes), toJson(dyn) and map.merge(map) of
//     crates/celx/src/general.rs (read at v1.4.1), evaluated with cel-go
//     (see Env).
//   - Body transformations: crates/agentgateway/src/http/
//     transformation_cel.rs (v1.4.1) apply: the body is replaced after the
//     headers are set and removed, by a string or bytes as they are or
//     another value as JSON, and by an empty body when the expression
//     fails. The backend is sent the model of the body it gets
//     (Outcome.UpstreamModel).
//
// What it leaves out: TLS, listener ports, ListenerSets, GAMMA service
// routes, rate limits, retries, backend policies, virtual models, the
// 2 MiB buffer limit (a body is always complete here), and the JWT checks
// other than the issuer: a simulate.Token is what a verifier accepted, and
// Token.Invalid stands for every token agentgateway refuses, among them a
// bad signature and an expired token or one without exp (agentgateway
// requires exp by default: jsonwebtoken's Validation lists it among the
// required claims). A provider's audiences are checked against the
// token's aud claim (none configured: any audience), and a verified token
// is removed from Authorization (jwt.rs Jwt::apply).
// Orders agentgateway keeps in a HashSet (several policies attached at one
// level) are taken by namespace/name here; for PreRouting transformations,
// where that decides which one runs, the trace says so and Ambiguities
// lists them.
//
// An Outcome's Router is the ModelRouter (namespace/name, from the
// generated objects' labels) whose route answered, Rule the HTTPRoute rule's
// name, and Backend the object the request reached ("InferencePool/<name>"
// or "AgentgatewayModel/<name>").
package agentgateway
