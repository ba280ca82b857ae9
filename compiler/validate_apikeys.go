package compiler

import (
	"strings"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/ir"
)

// checkAPIKeys checks policy.auth.apiKeys (docs/api-keys.md): each Secret
// once, a team that could equal a verified one, and with allowlists a team
// they name (a key whose team no allowlist names is refused everything).
func (v *validator) checkAPIKeys(a *v1.AuthSpec) {
	list := diag.Spec("policy", "auth", "apiKeys")
	names := make([]string, len(a.APIKeys))
	for i, k := range a.APIKeys {
		names[i] = k.SecretName
		if k.Team != "" && strings.TrimSpace(k.Team) != k.Team {
			v.diags.ErrorAt(list.Index(i).Child("team"), ReasonInvalidFormat,
				"team %q has leading or trailing whitespace and would never equal an allowlist's team or a JWT's; remove it", k.Team)
		}
		if len(a.Allowlists) > 0 && k.Team != "" && !allowlistNames(a, k.Team) {
			v.diags.WarnAt(list.Index(i).Child("team"), ReasonAPIKeyTeamNotAllowlisted,
				"the keys of secret %q authenticate team %q, which no policy.auth.allowlists entry names: every request with them will be refused 403 model_not_allowed; add an allowlist entry for the team", k.SecretName, k.Team)
		}
	}
	v.uniqueNames(list, "secretName", ReasonDuplicateAPIKeySecret, "secret", names)
}

// allowlistNames reports whether an allowlist entry names team.
func allowlistNames(a *v1.AuthSpec, team string) bool {
	for _, e := range a.Allowlists {
		if e.Team == team {
			return true
		}
	}
	return false
}

// lowerAPIKeys is policy.auth.apiKeys in the IR.
func lowerAPIKeys(in []v1.APIKeySource) []ir.APIKeySource {
	var out []ir.APIKeySource
	for _, k := range in {
		s := ir.APIKeySource{SecretName: k.SecretName, Team: k.Team}
		if k.ExpiresAt != nil {
			t := k.ExpiresAt.UTC()
			s.ExpiresAt = &t
		}
		out = append(out, s)
	}
	return out
}

// v1TeamHeader is the header the verified team is written to, on the
// defaulted spec, and the field that says so.
func v1TeamHeader(a *v1.AuthSpec) (header, from string) {
	if a.JWT != nil {
		return a.JWT.HeaderKey, "policy.auth.jwt.headerKey"
	}
	return DefaultTeamHeader, "the default team header with policy.auth.apiKeys"
}
