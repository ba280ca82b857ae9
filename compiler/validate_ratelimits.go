package compiler

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/diag"
)

// checkRateLimits holds policy.rateLimits (an extension, docs/rate-limits.md)
// to a verified identity: a limit counts per team or per API key, and a
// team the client could name itself (a header without policy.auth) would let
// it escape the limit by changing the header, or spend another team's.
func (v *validator) checkRateLimits() {
	limits := v.s.Policy.RateLimits
	if len(limits) == 0 {
		return
	}
	list := diag.Spec("policy", "rateLimits")
	verified := verifiedTeams(v.s.Policy.Auth)
	names := make([]string, len(limits))
	for i, l := range limits {
		names[i] = l.Name
		p := list.Index(i)
		if l.RequestsPerMinute == nil && l.InputTokensPerMinute == nil && l.OutputTokensPerMinute == nil {
			v.diags.ErrorAt(p, ReasonRateLimitRequired,
				"rate limit %q sets no limit; set requestsPerMinute, inputTokensPerMinute, outputTokensPerMinute or several", l.Name)
		}
		if !verified {
			v.diags.ErrorAt(p.Child("scope"), ReasonRateLimitRequiresAuth,
				"rate limit %q counts per %s, which only policy.auth verifies; without it the team is a header the client chooses and changes to escape the limit. Configure policy.auth", l.Name, l.Scope)
		} else if l.Scope == v1.RateLimitScopeKey && !apiKeysConfigured(v.s.Policy.Auth) {
			v.diags.ErrorAt(p.Child("scope"), ReasonRateLimitKeyScopeWithoutAPIKeys,
				"rate limit %q counts per API key, but policy.auth configures no API keys: a JWT carries no key, so the limit would count nothing. Configure policy.auth.apiKeys, or use scope team", l.Name)
		}
		if l.Scope != v1.RateLimitScopeKey && len(l.Keys) > 0 {
			v.diags.ErrorAt(p.Child("keys"), ReasonRateLimitKeysNeedKeyScope,
				"rate limit %q has scope %s and one counter per team; keys select the API keys of a scope key limit. Remove keys, or set scope: key", l.Name, l.Scope)
		}
		v.rateLimitNames(p.Child("teams"), "team", l.Teams)
		v.rateLimitNames(p.Child("keys"), "key", l.Keys)
	}
	v.uniqueNames(list, "name", ReasonDuplicateRateLimitName, "rate limit", names)
}

// rateLimitNames refuses an empty or padded team or key name (no verified
// identity is either) and one listed twice.
func (v *validator) rateLimitNames(list *field.Path, what string, names []string) {
	first := map[string]int{}
	for i, n := range names {
		if n == "" || strings.TrimSpace(n) != n {
			v.diags.ErrorAt(list.Index(i), ReasonInvalidFormat,
				"%s %q is empty or has leading or trailing whitespace and would never equal a verified %s; remove it", what, n, what)
			continue
		}
		if j, dup := first[n]; dup {
			v.diags.ErrorAt(list.Index(i), ReasonDuplicateRateLimitSubject,
				"%s %q is already listed at %s; list each %s once", what, n, list.Index(j), what)
			continue
		}
		first[n] = i
	}
}

// verifiedTeams reports whether policy.auth verifies who a request comes
// from (a JWT; API keys once policy.auth.apiKeys is configured).
func verifiedTeams(a *v1.AuthSpec) bool {
	return a != nil && (a.JWT != nil || apiKeysConfigured(a))
}

// apiKeysConfigured reports whether policy.auth authenticates API keys, the
// only credential that names a key (auth.Identity.Key).
func apiKeysConfigured(a *v1.AuthSpec) bool {
	return a != nil && len(a.APIKeys) > 0
}
