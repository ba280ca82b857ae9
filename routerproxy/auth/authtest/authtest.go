// Package authtest is a local OIDC issuer for tests of policy.auth: a JWKS
// on loopback and the tokens it signs.
package authtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/proxyapi"
)

// IssuerURL is the iss of every token Issuer signs by default.
const IssuerURL = "https://idp.example"

// Issuer is a local OIDC issuer on loopback: it signs tokens with RSA and
// EC keys and serves their public halves as a JWKS, which a test can rotate
// (AddRSA, AddEC) or take down (Down).
type Issuer struct {
	mu  sync.Mutex
	rsa map[string]*rsa.PrivateKey
	ec  map[string]*ecdsa.PrivateKey
	// Down makes the JWKS endpoint answer 503.
	Down atomic.Bool
	// Fetches counts JWKS requests.
	Fetches atomic.Int32
	// Server serves the JWKS at its URL.
	Server *httptest.Server
}

// NewIssuer starts an issuer with the keys "rsa-1" (RS256) and "ec-1" (ES256).
func NewIssuer(t testing.TB) *Issuer {
	t.Helper()
	is := &Issuer{rsa: map[string]*rsa.PrivateKey{}, ec: map[string]*ecdsa.PrivateKey{}}
	is.AddRSA(t, "rsa-1")
	is.AddEC(t, "ec-1")
	is.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		is.Fetches.Add(1)
		if is.Down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(is.jwks())
	}))
	t.Cleanup(is.Server.Close)
	return is
}

// AddRSA adds an RSA signing key.
func (is *Issuer) AddRSA(t testing.TB, kid string) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	is.mu.Lock()
	is.rsa[kid] = k
	is.mu.Unlock()
}

// AddEC adds a P-256 signing key.
func (is *Issuer) AddEC(t testing.TB, kid string) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	is.mu.Lock()
	is.ec[kid] = k
	is.mu.Unlock()
}

// RSAPublic is the public key of an RSA kid.
func (is *Issuer) RSAPublic(kid string) *rsa.PublicKey {
	is.mu.Lock()
	defer is.mu.Unlock()
	return &is.rsa[kid].PublicKey
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func (is *Issuer) jwks() map[string]any {
	is.mu.Lock()
	defer is.mu.Unlock()
	var keys []map[string]any
	for kid, k := range is.rsa {
		keys = append(keys, map[string]any{"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
			"n": b64(k.N.Bytes()), "e": b64(big.NewInt(int64(k.E)).Bytes())})
	}
	for kid, k := range is.ec {
		pub, err := k.PublicKey.ECDH()
		if err != nil {
			panic(err)
		}
		raw := pub.Bytes() // 0x04 || X || Y
		keys = append(keys, map[string]any{"kty": "EC", "kid": kid, "use": "sig", "alg": "ES256", "crv": "P-256",
			"x": b64(raw[1:33]), "y": b64(raw[33:])})
	}
	return map[string]any{"keys": keys}
}

// JWT is the policy.auth.jwt that trusts is: its issuer and JWKS, the team
// read from the claim "team" and sent on in the default team header.
func (is *Issuer) JWT() *proxyapi.JWT {
	return &proxyapi.JWT{Issuer: IssuerURL, JWKSURI: is.Server.URL, TeamClaim: "team", HeaderKey: wellknown.TeamHeader}
}

// Claims are a valid token's claims for team, valid for an hour.
func Claims(team string) jwt.MapClaims {
	now := time.Now()
	return jwt.MapClaims{"iss": IssuerURL, "sub": "alice", "team": team, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
}

// Token is a valid token of team (Claims) signed RS256 with "rsa-1".
func (is *Issuer) Token(t testing.TB, team string) string {
	t.Helper()
	return is.TokenFor(t, team, nil)
}

// TokenFor is Token with the audience aud (a string or a list of them;
// none when nil).
func (is *Issuer) TokenFor(t testing.TB, team string, aud any) string {
	t.Helper()
	c := Claims(team)
	if aud != nil {
		c["aud"] = aud
	}
	return is.Sign(t, jwt.SigningMethodRS256, "rsa-1", c)
}

// Sign signs claims with the key kid.
func (is *Issuer) Sign(t testing.TB, method jwt.SigningMethod, kid string, c jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, c)
	tok.Header["kid"] = kid
	is.mu.Lock()
	var key any
	if k, ok := is.rsa[kid]; ok {
		key = k
	} else {
		key = is.ec[kid]
	}
	is.mu.Unlock()
	s, err := tok.SignedString(key)
	require.NoError(t, err)
	return s
}

// Bearer is an http.RoundTripper that presents its token as a bearer token
// on every request (an SDK client's transport).
type Bearer string

// RoundTrip sends r with the Authorization header set.
func (b Bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	return Headers{Header: http.Header{"Authorization": {"Bearer " + string(b)}}}.RoundTrip(r)
}

// Headers is an http.RoundTripper that sets Header on every request before
// Next (http.DefaultTransport when nil) sends it: a client adding headers of
// its own, such as a forged identity header beside its Bearer token.
type Headers struct {
	Header http.Header
	Next   http.RoundTripper
}

// RoundTrip sends a copy of r with h's headers set.
func (h Headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.Header {
		r.Header[k] = v
	}
	if h.Next == nil {
		return http.DefaultTransport.RoundTrip(r)
	}
	return h.Next.RoundTrip(r)
}
