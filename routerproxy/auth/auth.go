// Package auth enforces a router's policy.auth in the router-proxy: it
// verifies the caller's JWT against the issuer's JWKS or its API key against
// the keys of the router's Secrets (apikeys.go) and decides, from the
// verified team, which models the caller may reach. It holds no HTTP server
// logic; the proxy calls it before any routing or budget.
package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/time/rate"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/proxyapi"
)

// Verification settings. They are documented in docs/router-proxy.md.
const (
	// Leeway is the clock skew tolerated on exp, nbf and iat.
	Leeway = 30 * time.Second
	// JWKSTimeout bounds one fetch of the key set.
	JWKSTimeout = 5 * time.Second
	// JWKSRefresh is how often the key set is fetched again in the
	// background; the last good set keeps serving while the endpoint fails.
	JWKSRefresh = 5 * time.Minute
	// UnknownKIDRefresh is the least time between two fetches caused by a
	// token whose kid is not in the set (key rotation), so unknown kids
	// cannot make the proxy hammer the issuer.
	UnknownKIDRefresh = 10 * time.Second
	// unknownKIDWait is how long a request may wait for that limiter before
	// it is refused instead.
	unknownKIDWait = 100 * time.Millisecond
)

// Algorithms are the only signing algorithms accepted: asymmetric ones. An
// unsigned token (alg none) and every HMAC algorithm are refused before a key
// is looked up, so a public key can never be used as an HMAC secret.
var Algorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// The codes of the refusals Authenticate answers (an OpenAI error object's
// code): 401s, and the 400 of a request that carries its credential twice.
const (
	CodeMissingToken = "missing_token"
	CodeInvalidToken = "invalid_token"
	// CodeMultipleCredentials: two Authorization headers, or two x-api-key
	// headers with no Authorization. RFC 6750 §3.1 calls a repeated
	// parameter invalid_request and asks for 400: which one is meant is
	// not the router's to guess (an intermediary may have added one).
	CodeMultipleCredentials = "multiple_credentials"
)

// Error is a refused request: Status is 401 (no valid token) or 403 (a
// verified team that may not reach the model).
type Error struct {
	Status int
	Code   string
	Msg    string
}

func (e *Error) Error() string { return e.Msg }

// Authorizer enforces one router's policy.auth.
type Authorizer struct {
	keys      keyfunc.Keyfunc // the JWKS; nil without policy.auth.jwt
	apiKeys   *KeyStore       // nil without policy.auth.apiKeys
	parser    *jwt.Parser
	issuer    string
	audiences []string // one must be named in aud; none: aud is not checked
	teamClaim string
	// Header is the canonical header the verified team is written to.
	Header string
	// allow maps a team to its model globs; nil enforces no allowlist, and a
	// team mapped to nil may reach every model.
	allow map[string][]string
}

// New starts fetching the JWKS and reading the API keys' Secrets again
// (both in the background, under ctx) and returns the Authorizer of cfg, or
// nil when cfg configures neither JWT nor API keys.
func New(ctx context.Context, cfg *proxyapi.Auth, client *http.Client, log *slog.Logger) (*Authorizer, error) {
	if !cfg.Authenticates() {
		return nil, nil
	}
	a := &Authorizer{Header: http.CanonicalHeaderKey(cfg.TeamHeader())}
	if cfg.JWT != nil {
		if err := a.initJWT(ctx, cfg.JWT, client, log); err != nil {
			return nil, err
		}
	}
	if len(cfg.APIKeys) > 0 {
		a.apiKeys = NewKeyStore(cfg.APIKeys, log)
		go a.apiKeys.Run(ctx, KeyReload)
	}
	if len(cfg.Allowlists) > 0 {
		a.allow = map[string][]string{}
		for _, e := range cfg.Allowlists {
			a.allow[e.Team] = e.Models
		}
	}
	return a, nil
}

// initJWT starts fetching the JWKS of j.
func (a *Authorizer) initJWT(ctx context.Context, j *proxyapi.JWT, client *http.Client, log *slog.Logger) error {
	noErrorOnColdStart := true // an issuer that is down at start is retried, not fatal
	keys, err := keyfunc.NewDefaultOverrideCtx(ctx, []string{j.JWKSURI}, keyfunc.Override{
		Client:                    client,
		HTTPTimeout:               JWKSTimeout,
		RefreshInterval:           JWKSRefresh,
		RefreshUnknownKID:         rate.NewLimiter(rate.Every(UnknownKIDRefresh), 1),
		RateLimitWaitMax:          unknownKIDWait,
		NoErrorReturnFirstHTTPReq: &noErrorOnColdStart,
		RefreshErrorHandlerFunc: func(u string) func(context.Context, error) {
			return func(ctx context.Context, err error) {
				log.WarnContext(ctx, "JWKS refresh failed; the last good key set keeps serving", "url", u, "error", err.Error())
			}
		},
	})
	if err != nil {
		return fmt.Errorf("policy.auth.jwt.jwksURI: %w", err)
	}
	a.keys, a.issuer, a.teamClaim, a.parser = keys, j.Issuer, j.TeamClaim, newParser(j.Issuer, nil)
	return nil
}

// APIKeys is the store of policy.auth.apiKeys (its status, its reload);
// nil without API keys.
func (a *Authorizer) APIKeys() *KeyStore {
	if a == nil {
		return nil
	}
	return a.apiKeys
}

// newParser is the verification every token gets (asymmetric algorithms,
// the issuer, exp required, iat checked, the leeway) and, with audiences,
// an aud claim naming one of them.
func newParser(issuer string, audiences []string) *jwt.Parser {
	opts := []jwt.ParserOption{
		jwt.WithValidMethods(Algorithms),
		jwt.WithIssuer(issuer),
		jwt.WithLeeway(Leeway),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
	}
	if len(audiences) > 0 {
		opts = append(opts, jwt.WithAudience(audiences...))
	}
	return jwt.NewParser(opts...)
}

// key resolves a token's verification key from the JWKS, refusing
// symmetric keys a key set should never hold.
func (a *Authorizer) key(ctx context.Context) jwt.Keyfunc {
	kf := a.keys.KeyfuncCtx(ctx)
	return func(t *jwt.Token) (any, error) {
		k, err := kf(t)
		if err != nil {
			return nil, err
		}
		if _, symmetric := k.([]byte); symmetric {
			return nil, errors.New("the key set holds a symmetric key for this token; only asymmetric keys verify")
		}
		return k, nil
	}
}

// Verified is what a verified token says: the caller's team, its subject
// and when it expires.
type Verified struct {
	Team, Subject string
	Expiration    time.Time
}

// ForAudiences is the Authorizer verifying tokens as a does except for the
// audience: their aud claim must name one of audiences (RFC 7519 §4.1.3,
// RFC 8707: a token for another resource is refused); none checks no
// audience. The key set is shared.
func (a *Authorizer) ForAudiences(audiences ...string) *Authorizer {
	b := *a
	b.audiences = slices.Clone(audiences)
	b.parser = newParser(a.issuer, b.audiences)
	return &b
}

// Verify checks a raw bearer token exactly as Authenticate does, without a
// request.
func (a *Authorizer) Verify(ctx context.Context, raw string) (Verified, *Error) {
	if a.keys == nil {
		return Verified{}, &Error{http.StatusUnauthorized, CodeInvalidToken, "the bearer token is not valid: this router accepts no JWT"}
	}
	claims := jwt.MapClaims{}
	if _, err := a.parser.ParseWithClaims(raw, claims, a.key(ctx)); err != nil {
		return Verified{}, &Error{http.StatusUnauthorized, CodeInvalidToken, "the bearer token is not valid: " + a.reason(err, claims)}
	}
	team, ok := claims[a.teamClaim].(string)
	if !ok || team == "" {
		return Verified{}, &Error{http.StatusUnauthorized, CodeInvalidToken, "the bearer token has no string claim " + a.teamClaim + " naming the caller's team"}
	}
	v := Verified{Team: team}
	v.Subject, _ = claims.GetSubject()
	if exp, err := claims.GetExpirationTime(); err == nil && exp != nil {
		v.Expiration = exp.Time
	}
	return v, nil
}

// Identity is who an authenticated request comes from: its verified team
// and, for a request authenticated by an API key, the key's name (never its
// value; empty for a JWT). Allowlists, budgets, rate limits, classification
// and the audit read a request's identity, whatever credential proved it.
type Identity struct {
	Team string
	Key  string
}

// Authenticate verifies the request's credential (its bearer token, or
// with API keys its x-api-key when it sends no Authorization) and returns
// the verified identity. Whatever the outcome, the client's own value of
// the team header is removed first; on success it is replaced by the
// verified one.
func (a *Authorizer) Authenticate(r *http.Request) (Identity, *Error) {
	r.Header.Del(a.Header)
	raw, header, n := a.credential(r.Header)
	switch {
	case n > 1:
		return Identity{}, MultipleCredentials(header, n)
	case raw == "":
		return Identity{}, &Error{http.StatusUnauthorized, CodeMissingToken, a.missingMessage()}
	}
	id, err := a.Identify(r.Context(), raw)
	if err != nil {
		return Identity{}, err
	}
	r.Header.Set(a.Header, id.Team)
	return id, nil
}

// Identify verifies one credential: an API key of the store when it is one,
// otherwise a JWT when the router accepts them and raw has a JWT's shape
// (three dot-separated parts: its JWT semantics and refusals are kept),
// otherwise an unknown API key when the router has keys.
func (a *Authorizer) Identify(ctx context.Context, raw string) (Identity, *Error) {
	if a.apiKeys != nil {
		if id, err, found := a.apiKeys.lookup(raw); found {
			return id, err
		}
		if a.keys == nil || strings.Count(raw, ".") != 2 {
			return Identity{}, &Error{http.StatusUnauthorized, CodeInvalidAPIKey, "the API key is not valid: it is not a key of this router"}
		}
	}
	v, err := a.Verify(ctx, raw)
	if err != nil {
		return Identity{}, err
	}
	return Identity{Team: v.Team}, nil
}

// MultipleCredentials is the refusal of a request that carries n (> 1)
// of the credential header.
func MultipleCredentials(header string, n int) *Error {
	return &Error{http.StatusBadRequest, CodeMultipleCredentials,
		fmt.Sprintf("the request carries %d %s headers: send one credential", n, header)}
}

// credential is the request's one credential: a single "Authorization:
// Bearer <token>", or with API keys and no Authorization a single
// x-api-key (what Anthropic's clients send). header is the header it is
// read from and n how many of it the request carries: raw is empty when n
// is not 1, or when the one value holds no credential (another scheme).
func (a *Authorizer) credential(h http.Header) (raw, header string, n int) {
	vs := h.Values("Authorization")
	if a.apiKeys != nil && len(vs) == 0 {
		ks := h.Values("X-Api-Key")
		if len(ks) != 1 {
			return "", "x-api-key", len(ks)
		}
		return strings.TrimSpace(ks[0]), "x-api-key", 1
	}
	if len(vs) != 1 {
		return "", "Authorization", len(vs)
	}
	return bearerToken(vs[0]), "Authorization", 1
}

// missingMessage tells a caller without a credential what to send.
func (a *Authorizer) missingMessage() string {
	switch {
	case a.apiKeys == nil:
		return "a bearer token is required: send Authorization: Bearer <JWT>"
	case a.keys == nil:
		return "an API key is required: send Authorization: Bearer <key> or x-api-key: <key>"
	}
	return "a bearer token or API key is required: send Authorization: Bearer <JWT or key> or x-api-key: <key>"
}

// reason is the verification failure, without the library's prefixes.
// claims are the token's, as far as they were read.
func (a *Authorizer) reason(err error, claims jwt.MapClaims) string {
	switch {
	case errors.Is(err, jwt.ErrTokenExpired):
		return "it has expired"
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return "it is not valid yet"
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return "its issuer is not the configured one"
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return "its audience does not name this resource"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return "its signature does not verify"
	case errors.Is(err, jwt.ErrTokenMalformed):
		return "it is malformed"
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return "it has no " + strings.Join(a.missingClaims(claims), " or ") + " claim"
	case errors.Is(err, jwt.ErrTokenUnverifiable):
		return "no key of the issuer verifies it (unknown kid, or an algorithm other than " + strings.Join(Algorithms, ", ") + ")"
	}
	return "it could not be verified"
}

// missingClaims are the claims the parser requires (exp, iss, and aud
// with audiences) that the token lacks, in that order.
func (a *Authorizer) missingClaims(claims jwt.MapClaims) []string {
	required := []string{"exp", "iss"}
	if len(a.audiences) > 0 {
		required = append(required, "aud")
	}
	var out []string
	for _, c := range required {
		if v, ok := claims[c]; !ok || v == nil || v == "" {
			out = append(out, c)
		}
	}
	if len(out) == 0 { // an empty aud list, say
		out = append(out, "required")
	}
	return out
}

// bearerToken is the token of an Authorization value "Bearer <token>", or
// "" for another scheme.
func bearerToken(v string) string {
	scheme, token, ok := strings.Cut(v, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

// Enforced reports whether an allowlist decides which models a team reaches.
func (a *Authorizer) Enforced() bool { return a != nil && a.allow != nil }

// Allowed reports whether a verified team may reach a model going by any of
// names (the requested model is one name; the model of the backend that
// serves goes by several, proxyapi.Backend.AllowNames): with an allowlist,
// only listed teams, and of those only their listed models (by the models
// glob language; no list means every model).
func (a *Authorizer) Allowed(team string, names ...string) bool {
	if !a.Enforced() {
		return true
	}
	models, listed := a.allow[team]
	if !listed {
		return false
	}
	return wellknown.AllowlistAllows(models, names...)
}
