package compiler

import (
	"net/netip"
	"net/url"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/diag"
)

func (v *validator) checkBudgets() {
	budgets := v.s.Policy.Budgets
	names := make([]string, len(budgets))
	for i, b := range budgets {
		names[i] = b.Name
		p := diag.Budget(i)
		if b.MaxTokens == nil && b.MaxUSD == "" {
			v.diags.ErrorAt(p, ReasonBudgetLimitRequired,
				"budget %q sets no limit; set maxTokens, maxUSD or both", b.Name)
		}
		switch {
		case b.Scope == v1.ScopeRule && b.RuleName == "":
			v.diags.ErrorAt(p.Child("ruleName"), ReasonRuleNameRequired,
				"budget %q has scope rule and must name the rule it caps in ruleName", b.Name)
		case b.Scope == v1.ScopeRule && !v.rules[b.RuleName]:
			v.diags.ErrorAt(p.Child("ruleName"), ReasonUnknownRule,
				"rule %q is not declared in spec.rules; name one of the router's rules", b.RuleName)
		case b.Scope != v1.ScopeRule && b.RuleName != "":
			v.diags.WarnAt(p.Child("ruleName"), ReasonFieldIgnored,
				"ruleName is read only for scope rule and is ignored for scope %s", b.Scope)
		}
		if b.HeaderKey != "" {
			if b.Scope != v1.ScopeTeam {
				v.diags.WarnAt(p.Child("headerKey"), ReasonFieldIgnored,
					"headerKey is read only for scope team and is ignored for scope %s", b.Scope)
			} else {
				v.headerToken(p.Child("headerKey"), b.HeaderKey)
			}
		}
	}
	v.uniqueNames(diag.Spec("policy", "budgets"), "name", ReasonDuplicateBudgetName, "budget", names)
}

func (v *validator) checkAuth() {
	a := v.s.Policy.Auth
	if a == nil {
		return
	}
	auth := diag.Spec("policy", "auth")
	if a.JWT != nil {
		v.headerToken(auth.Child("jwt", "headerKey"), a.JWT.HeaderKey)
		if u, err := url.Parse(a.JWT.JWKSURI); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			v.diags.ErrorAt(auth.Child("jwt", "jwksURI"), ReasonInvalidURL,
				"%q is not an http(s) URL; the signing keys are fetched from it", a.JWT.JWKSURI)
		} else if u.Scheme == "http" && !wellknown.PlainHTTPHost(u.Hostname()) {
			v.diags.ErrorAt(auth.Child("jwt", "jwksURI"), ReasonInsecureJWKSURI,
				"%q fetches the signing keys in plain http from %s: anyone on the path could hand the router keys of their own and sign any token it would accept; use https (plain http only to a loopback or cluster-local host: localhost, a Service name, *.svc, *.svc.cluster.local, or a private IP address)", a.JWT.JWKSURI, u.Hostname())
		}
		v.checkAudiences(auth.Child("jwt", "audiences"), a.JWT.Audiences)
	}
	if a.JWT != nil || len(a.APIKeys) > 0 {
		// With JWT or API keys on, the team is a verified one: a team
		// budget that keys on another header would key on a value the
		// client chooses.
		header, from := v1TeamHeader(a)
		for i, b := range v.s.Policy.Budgets {
			if b.Scope == v1.ScopeTeam && !strings.EqualFold(b.HeaderKey, header) {
				v.diags.ErrorAt(diag.Budget(i).Child("headerKey"), ReasonTeamBudgetHeaderUnverified,
					"team budget %q keys on %s, which the client chooses, while the verified team is written to %s (%s); use the same header", b.Name, b.HeaderKey, header, from)
			}
		}
	}
	v.checkAPIKeys(a)
	if len(a.Allowlists) > 0 && a.JWT == nil && len(a.APIKeys) == 0 {
		v.diags.ErrorAt(auth.Child("allowlists"), ReasonAllowlistRequiresJWT,
			"allowlists authorize on a verified team, so they require policy.auth.jwt or policy.auth.apiKeys; configure one or remove the allowlists")
	}
	teams := make([]string, len(a.Allowlists))
	for i, e := range a.Allowlists {
		teams[i] = e.Team
		if e.Team != "" && strings.TrimSpace(e.Team) != e.Team {
			v.diags.ErrorAt(auth.Child("allowlists").Index(i).Child("team"), ReasonInvalidFormat,
				"team %q has leading or trailing whitespace and would never equal a verified claim; remove it", e.Team)
		}
	}
	v.uniqueNames(auth.Child("allowlists"), "team", ReasonDuplicateTeam, "team", teams)
}

// maxAudience is the CRD's bound on one policy.auth.jwt.audiences entry.
const maxAudience = 2048

// checkAudiences refuses an audience no token could carry as written (one
// with surrounding whitespace) and an audience listed twice.
func (v *validator) checkAudiences(list *field.Path, auds []string) {
	for i, a := range auds {
		// The CRD's items bounds; the field table holds no item constraints.
		switch {
		case a == "":
			v.diags.ErrorAt(list.Index(i), ReasonTooShort, "an audience is empty; name the aud value tokens for this router carry")
		case len(a) > maxAudience:
			v.diags.ErrorAt(list.Index(i), ReasonTooLong, "audience is %d bytes, more than %d", len(a), maxAudience)
		}
		if a != "" && strings.TrimSpace(a) != a {
			v.diags.ErrorAt(list.Index(i), ReasonInvalidFormat,
				"audience %q has leading or trailing whitespace and would never equal a token's aud; remove it", a)
		}
	}
	first := map[string]int{}
	for i, a := range auds {
		if j, dup := first[a]; dup {
			v.diags.ErrorAt(list.Index(i), ReasonDuplicateAudience,
				"audience %q is already listed at %s; list each audience once", a, list.Index(j))
			continue
		}
		first[a] = i
	}
}

// configMount is where the router-proxy's configuration is mounted read-only.
const configMount = wellknown.ConfigMount

func (v *validator) checkAuditLog() {
	a := v.s.Policy.AuditLog
	p := diag.Spec("policy", "auditLog")
	if wellknown.IsCredentialHeader(a.CallerHeader) {
		v.diags.ErrorAt(p.Child("callerHeader"), ReasonCredentialHeader,
			"%s carries a credential and would be written to every audit entry; name a non-secret header such as X-LLMKube-Client", a.CallerHeader)
	}
	if len(a.TrustedProxyCIDRs) > 0 && !a.LogClientAddress {
		v.diags.ErrorAt(p.Child("trustedProxyCIDRs"), ReasonRequiresLogClientAddress,
			"trustedProxyCIDRs only decide which address is logged as client; set logClientAddress: true or remove them")
	}
	for i, c := range a.TrustedProxyCIDRs {
		if !validCIDROrAddr(c) {
			v.diags.ErrorAt(p.Child("trustedProxyCIDRs").Index(i), ReasonInvalidCIDR,
				"%q is neither a CIDR nor an IP address; write 10.0.0.0/8, 192.168.1.10 or fd00::/8", c)
		}
	}
	if a.Sink == v1.SinkFile {
		v.checkAuditFilePath(p.Child("filePath"), a.FilePath)
	}
}

func validCIDROrAddr(s string) bool {
	if _, err := netip.ParsePrefix(s); err == nil {
		return true
	}
	_, err := netip.ParseAddr(s)
	return err == nil
}

// checkAuditFilePath requires an absolute file path inside a directory the
// proxy can mount a volume on: not the root directory itself and not the
// read-only config mount.
func (v *validator) checkAuditFilePath(at *field.Path, file string) {
	clean := path.Clean(file)
	var problem string
	switch {
	case !path.IsAbs(file):
		problem = "is not an absolute path"
	case path.Dir(clean) == "/":
		problem = "is directly under / (or is /), where no volume can be mounted for it"
	case clean == configMount || strings.HasPrefix(clean, configMount+"/"):
		problem = "is inside " + configMount + ", the router-proxy's read-only config mount"
	default:
		return
	}
	v.diags.ErrorAt(at, ReasonInvalidFilePath,
		"audit log file %q %s; use a file in a writable directory such as %s", file, problem, DefaultAuditFilePath)
}
