package compiler

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/capability"
	"github.com/llmkube/llmkube-compile/diag"
)

// validate checks a defaulted router against every rule of the reference and
// returns every problem found: no check stops at the first problem and no
// check depends on another having passed.
//
// The checks are grouped by subject:
//   - validate_fields.go: every enum, bound, pattern, length and item count of
//     the field table (the CRD markers, which offline input never meets);
//   - validate_backends.go: backends, their sources, URLs and balancing;
//   - validate_rules.go: rules, references, strategies, fail-closed and
//     classification;
//   - validate_policy.go: budgets, auth and the audit log;
//   - validate_ratelimits.go: rate limits;
//   - validate_dataplane.go: agentGatewayRef, endpoint, proxy and the
//     reserved fields.
//
// The plane's capability table (capabilities.go) has been applied already;
// a check of what the table refuses or does not read is skipped.
func validate(r *v1.ModelRouter, res *resolution, plane capability.Table) diag.List {
	v := newValidator(r, res)
	v.plane = plane
	for _, check := range []func(){
		v.checkFields,
		v.checkBackends,
		v.checkRules,
		v.checkDefaultRoute,
		v.checkClassification,
		v.checkBudgets,
		v.checkAuth,
		v.checkRateLimits,
		v.checkAuditLog,
		v.checkAgentGatewayRef,
		v.checkEndpoint,
		v.checkProxy,
		v.checkPassthrough,
		v.checkMCPServer,
	} {
		check()
	}
	return v.diags
}

// validator carries the router under validation, what its references resolved
// to, lookups computed once, and the diagnostics found so far.
type validator struct {
	r     *v1.ModelRouter
	s     *v1.ModelRouterSpec
	res   *resolution
	diags diag.List
	// plane is the capability table of the router's data plane.
	plane capability.Table

	// backends maps a backend name to its first declaration.
	backends map[string]*v1.RouterBackend
	// rules holds every declared rule name.
	rules map[string]bool
	// headerTimeout is the (defaulted) spec.proxy.responseHeaderTimeout, the
	// ceiling of every rule and backend timeout; 0 when it is itself invalid.
	headerTimeout time.Duration
}

func newValidator(r *v1.ModelRouter, res *resolution) *validator {
	v := &validator{r: r, s: &r.Spec, res: res, backends: map[string]*v1.RouterBackend{}, rules: map[string]bool{}}
	for i := range v.s.Backends {
		b := &v.s.Backends[i]
		if _, seen := v.backends[b.Name]; !seen && b.Name != "" {
			v.backends[b.Name] = b
		}
	}
	for _, rule := range v.s.Rules {
		v.rules[rule.Name] = true
	}
	if d, err := time.ParseDuration(v.s.Proxy.ResponseHeaderTimeout); err == nil && d > 0 {
		v.headerTimeout = d
	}
	return v
}

// refuses reports whether the plane's table refuses what the spec sets at
// path: a check of what that field asks for is moot then.
func (v *validator) refuses(path string) bool {
	return refuses(v.s, v.plane, path)
}

// modelRouting: the plane reads agentGatewayRef.routing (its table says
// so, capability.Table.Reads), whose Model routes every backend by its model
// id, without rules.
func (v *validator) modelRouting() bool {
	g := v.s.AgentGatewayRef
	return v.plane.Reads("spec.agentGatewayRef.routing") && g != nil && g.Routing == v1.RoutingModel
}

// uniqueNames reports every name that repeats an earlier one in a list, at
// list[i].<name>. Empty names are left to the Required check.
func (v *validator) uniqueNames(list *field.Path, name, reason, what string, names []string) {
	first := map[string]int{}
	for i, n := range names {
		if n == "" {
			continue
		}
		if j, dup := first[n]; dup {
			v.diags.ErrorAt(list.Index(i).Child(name), reason,
				"%s %q is already used by %s; %s names must be unique", what, n, list.Index(j), what)
			continue
		}
		first[n] = i
	}
}

// durationRule bounds a duration field. Every duration must parse and must
// not be negative; zero is allowed only where it means "disabled".
type durationRule struct {
	min, max  time.Duration // 0 means unbounded
	allowZero bool
}

var (
	// timeoutRule is a timeout that must be positive.
	timeoutRule = durationRule{}
	// disableableRule is a timeout that "0s" disables.
	disableableRule = durationRule{allowZero: true}
)

// duration checks one duration field and returns its value; ok is false when
// the field is unset or invalid (and then already reported).
func (v *validator) duration(at *field.Path, value string, rule durationRule) (d time.Duration, ok bool) {
	if value == "" {
		return 0, false
	}
	d, err := time.ParseDuration(value)
	if err != nil {
		v.diags.ErrorAt(at, ReasonInvalidDuration,
			"%q is not a duration; write a number with a unit, such as 30s, 5m or 1h", value)
		return 0, false
	}
	switch {
	case d < 0 && rule.allowZero:
		v.diags.ErrorAt(at, ReasonOutOfRange, "duration %s is negative; use a positive duration, or 0s to disable", value)
	case d < 0:
		v.diags.ErrorAt(at, ReasonOutOfRange, "duration %s is negative; use a positive duration", value)
	case d == 0 && !rule.allowZero:
		v.diags.ErrorAt(at, ReasonOutOfRange, "duration %s must be greater than 0; leave the field unset to use the default", value)
	case d == 0:
		return d, true
	case (rule.min != 0 && d < rule.min) || (rule.max != 0 && d > rule.max):
		v.diags.ErrorAt(at, ReasonOutOfRange, "duration %s is out of range: it must be %s", value, rule.describe())
	default:
		return d, true
	}
	return 0, false
}

func (r durationRule) describe() string {
	switch {
	case r.min != 0 && r.max != 0:
		return fmt.Sprintf("between %s and %s", ShortDuration(r.min), ShortDuration(r.max))
	case r.min != 0:
		return "at least " + ShortDuration(r.min)
	default:
		return "at most " + ShortDuration(r.max)
	}
}

// ShortDuration writes whole minutes and hours without their zero tail
// ("2m", "1h", "1m30s", not Go's "1h0m0s"), as a person would: how the
// compiler's messages, and the controller's, write a duration.
func ShortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// cappedTimeout checks a rule or backend timeout and warns when the proxy's
// responseHeaderTimeout will cap it (lowering applies the cap).
func (v *validator) cappedTimeout(at *field.Path, value string) {
	d, ok := v.duration(at, value, timeoutRule)
	if ok && v.headerTimeout > 0 && d > v.headerTimeout {
		v.diags.WarnAt(at, ReasonTimeoutCapped,
			"timeout %s exceeds spec.proxy.responseHeaderTimeout %s and is capped to %s; raise spec.proxy.responseHeaderTimeout to allow longer waits",
			value, v.s.Proxy.ResponseHeaderTimeout, v.s.Proxy.ResponseHeaderTimeout)
	}
}

// tokenPattern is an RFC 7230 token, the syntax of an HTTP header name.
var tokenPattern = regexp.MustCompile(`^[A-Za-z0-9!#$%&'*+.^_|~-]+$`)

// headerToken reports a header name that is not an RFC 7230 token.
func (v *validator) headerToken(at *field.Path, name string) {
	if !tokenPattern.MatchString(name) {
		v.diags.ErrorAt(at, ReasonInvalidFormat,
			"%q is not an HTTP header name (an RFC 7230 token: letters, digits and !#$%%&'*+.^_|~-)", name)
	}
}

// headerTokens reports every entry of a header-name list that is not an RFC
// 7230 token, at list[i].
func (v *validator) headerTokens(list *field.Path, names []string) {
	for i, h := range names {
		v.headerToken(list.Index(i), h)
	}
}

// backendsOf returns the declared backends a list of names refers to, with
// their positions in the list; unknown names are skipped (reported elsewhere).
func (v *validator) backendsOf(names []string) (out []*v1.RouterBackend, at []int) {
	for j, n := range names {
		if b, ok := v.backends[n]; ok {
			out = append(out, b)
			at = append(at, j)
		}
	}
	return out, at
}

// quoted renders names as "a", "b".
func quoted(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
