package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/proxyapi"
)

const issuer = "https://idp.example"

// issuerKeys is a local OIDC issuer: it signs tokens and serves its public
// keys as a JWKS, which can be rotated or taken down.
type issuerKeys struct {
	mu      sync.Mutex
	rsa     map[string]*rsa.PrivateKey
	ec      map[string]*ecdsa.PrivateKey
	down    atomic.Bool
	fetches atomic.Int32
	srv     *httptest.Server
}

func newIssuer(t *testing.T) *issuerKeys {
	t.Helper()
	is := &issuerKeys{rsa: map[string]*rsa.PrivateKey{}, ec: map[string]*ecdsa.PrivateKey{}}
	is.addRSA(t, "rsa-1")
	is.addEC(t, "ec-1")
	is.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		is.fetches.Add(1)
		if is.down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(is.jwks())
	}))
	t.Cleanup(is.srv.Close)
	return is
}

func (is *issuerKeys) addRSA(t *testing.T, kid string) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	is.mu.Lock()
	is.rsa[kid] = k
	is.mu.Unlock()
}

func (is *issuerKeys) addEC(t *testing.T, kid string) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	is.mu.Lock()
	is.ec[kid] = k
	is.mu.Unlock()
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func (is *issuerKeys) jwks() map[string]any {
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

// claims are a valid token's claims for team.
func claims(team string) jwt.MapClaims {
	now := time.Now()
	return jwt.MapClaims{"iss": issuer, "sub": "alice", "team": team, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
}

func (is *issuerKeys) sign(t *testing.T, method jwt.SigningMethod, kid string, c jwt.MapClaims) string {
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

func newAuthorizer(t *testing.T, is *issuerKeys, allow []proxyapi.Allowlist) *Authorizer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cfg := &proxyapi.Config{APIVersion: proxyapi.APIVersion, Policy: proxyapi.Policy{Auth: &proxyapi.Auth{
		JWT: &proxyapi.JWT{Issuer: issuer, JWKSURI: is.srv.URL, TeamClaim: "team"}, Allowlists: allow}}}
	cfg.SetDefaults()
	a, err := New(ctx, cfg.Policy.Auth, is.srv.Client(), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	require.NotNil(t, a)
	return a
}

func request(token string, headers ...string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Add(headers[i], headers[i+1])
	}
	return r
}

func TestValidTokensRSAAndEC(t *testing.T) {
	is := newIssuer(t)
	a := newAuthorizer(t, is, nil)
	for _, tc := range []struct {
		method jwt.SigningMethod
		kid    string
	}{{jwt.SigningMethodRS256, "rsa-1"}, {jwt.SigningMethodES256, "ec-1"}} {
		r := request(is.sign(t, tc.method, tc.kid, claims("team-a")), "X-Llmkube-Team", "forged")
		team, err := a.Authenticate(r)
		require.Nil(t, err, "%s: %v", tc.kid, err)
		assert.Equal(t, "team-a", team)
		assert.Equal(t, []string{"team-a"}, r.Header.Values("X-Llmkube-Team"), "the forged value is replaced by the verified one")
	}
}

func TestInvalidTokensAre401(t *testing.T) {
	is := newIssuer(t)
	a := newAuthorizer(t, is, nil)
	expired := claims("a")
	expired["exp"] = time.Now().Add(-time.Hour).Unix()
	notYet := claims("a")
	notYet["nbf"] = time.Now().Add(time.Hour).Unix()
	wrongIss := claims("a")
	wrongIss["iss"] = "https://evil.example"
	noTeam := claims("a")
	delete(noTeam, "team")
	noExp := claims("a")
	delete(noExp, "exp")

	good := is.sign(t, jwt.SigningMethodRS256, "rsa-1", claims("a"))
	tampered := good[:len(good)-4] + "AAAA"
	none, err := jwt.NewWithClaims(jwt.SigningMethodNone, claims("a")).SignedString(jwt.UnsafeAllowNoneSignatureType)
	require.NoError(t, err)
	// HS256 keyed with the RSA public key: the classic algorithm confusion.
	is.mu.Lock()
	pubDER, err := x509.MarshalPKIXPublicKey(&is.rsa["rsa-1"].PublicKey)
	is.mu.Unlock()
	require.NoError(t, err)
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	hsTok := jwt.NewWithClaims(jwt.SigningMethodHS256, claims("a"))
	hsTok.Header["kid"] = "rsa-1"
	confused, err := hsTok.SignedString(pubPEM)
	require.NoError(t, err)

	for name, tok := range map[string]string{
		"expired":                       is.sign(t, jwt.SigningMethodRS256, "rsa-1", expired),
		"not yet valid":                 is.sign(t, jwt.SigningMethodRS256, "rsa-1", notYet),
		"wrong issuer":                  is.sign(t, jwt.SigningMethodRS256, "rsa-1", wrongIss),
		"no team claim":                 is.sign(t, jwt.SigningMethodRS256, "rsa-1", noTeam),
		"no exp":                        is.sign(t, jwt.SigningMethodRS256, "rsa-1", noExp),
		"bad signature":                 tampered,
		"alg none":                      none,
		"HS256 with the RSA public key": confused,
		"garbage":                       "not.a.jwt",
	} {
		r := request(tok, "X-Llmkube-Team", "forged")
		_, aerr := a.Authenticate(r)
		require.NotNil(t, aerr, name)
		assert.Equal(t, http.StatusUnauthorized, aerr.Status, name)
		assert.Empty(t, r.Header.Values("X-Llmkube-Team"), "%s: a forged team header never survives", name)
	}
	_, aerr := a.Authenticate(request(""))
	require.NotNil(t, aerr)
	assert.Equal(t, "missing_token", aerr.Code)
	r := request(good)
	r.Header.Add("Authorization", "Bearer "+good)
	_, aerr = a.Authenticate(r)
	require.NotNil(t, aerr, "a doubled Authorization header is refused")
}

// TestKeyRotationAndOutage: an unknown kid fetches the set again (rate
// limited); while the issuer is down the last good keys keep verifying.
func TestKeyRotationAndOutage(t *testing.T) {
	is := newIssuer(t)
	a := newAuthorizer(t, is, nil)
	_, err := a.Authenticate(request(is.sign(t, jwt.SigningMethodRS256, "rsa-1", claims("a"))))
	require.Nil(t, err)

	is.addRSA(t, "rsa-2") // the issuer rotates
	before := is.fetches.Load()
	team, err := a.Authenticate(request(is.sign(t, jwt.SigningMethodRS256, "rsa-2", claims("b"))))
	require.Nil(t, err, "%v", err)
	assert.Equal(t, "b", team)
	assert.Equal(t, before+1, is.fetches.Load(), "the unknown kid caused one fetch")

	// A burst of unknown kids does not hammer the issuer.
	before = is.fetches.Load()
	for range 20 {
		_, err := a.Authenticate(request(is.sign(t, jwt.SigningMethodRS256, "rsa-2", claims("b"))[:10] + "x.y.z"))
		require.NotNil(t, err)
	}
	stranger := jwt.NewWithClaims(jwt.SigningMethodRS256, claims("c"))
	stranger.Header["kid"] = "unknown"
	k, _ := rsa.GenerateKey(rand.Reader, 2048)
	st, _ := stranger.SignedString(k)
	for range 20 {
		_, err := a.Authenticate(request(st))
		require.NotNil(t, err)
	}
	assert.LessOrEqual(t, is.fetches.Load()-before, int32(1), "unknown kids are rate limited")

	is.down.Store(true)
	team, err = a.Authenticate(request(is.sign(t, jwt.SigningMethodES256, "ec-1", claims("a"))))
	require.Nil(t, err, "cached keys serve while the issuer is down: %v", err)
	assert.Equal(t, "a", team)
}

func TestIssuerDownAtColdStart(t *testing.T) {
	is := newIssuer(t)
	is.down.Store(true)
	a := newAuthorizer(t, is, nil)
	tok := is.sign(t, jwt.SigningMethodRS256, "rsa-1", claims("a"))
	_, err := a.Authenticate(request(tok))
	require.NotNil(t, err, "no key, no entry")
	assert.Equal(t, http.StatusUnauthorized, err.Status)

	is.down.Store(false)
	require.Eventually(t, func() bool {
		_, err := a.Authenticate(request(tok))
		return err == nil
	}, 3*UnknownKIDRefresh, 200*time.Millisecond, "once the issuer is back, an unknown kid fetches the keys")
}

func TestAllowlists(t *testing.T) {
	is := newIssuer(t)
	a := newAuthorizer(t, is, []proxyapi.Allowlist{{Team: "research", Models: []string{"qwen3-*"}}, {Team: "ops"}})
	assert.True(t, a.Allowed("research", "qwen3-32b"))
	assert.False(t, a.Allowed("research", "claude-opus"), "a listed team off its models")
	assert.True(t, a.Allowed("ops", "anything"), "no models: every model")
	assert.False(t, a.Allowed("sales", "qwen3-32b"), "an unlisted team: default deny")
	var none *Authorizer
	assert.True(t, none.Allowed("", "x"), "no policy.auth: every caller")
}
