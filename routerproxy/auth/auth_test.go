package auth

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/auth/authtest"
)

func newAuthorizer(t *testing.T, is *authtest.Issuer, allow []proxyapi.Allowlist) *Authorizer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cfg := &proxyapi.Config{APIVersion: proxyapi.APIVersion, Policy: proxyapi.Policy{Auth: &proxyapi.Auth{
		JWT: is.JWT(), Allowlists: allow}}}
	cfg.SetDefaults()
	a, err := New(ctx, cfg.Policy.Auth, is.Server.Client(), slog.New(slog.DiscardHandler))
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
	is := authtest.NewIssuer(t)
	a := newAuthorizer(t, is, nil)
	for _, tc := range []struct {
		method jwt.SigningMethod
		kid    string
	}{{jwt.SigningMethodRS256, "rsa-1"}, {jwt.SigningMethodES256, "ec-1"}} {
		r := request(is.Sign(t, tc.method, tc.kid, authtest.Claims("team-a")), "X-Llmkube-Team", "forged")
		id, err := a.Authenticate(r)
		require.Nil(t, err, "%s: %v", tc.kid, err)
		assert.Equal(t, Identity{Team: "team-a"}, id)
		assert.Equal(t, []string{"team-a"}, r.Header.Values("X-Llmkube-Team"), "the forged value is replaced by the verified one")
	}
}

func TestInvalidTokensAre401(t *testing.T) {
	is := authtest.NewIssuer(t)
	a := newAuthorizer(t, is, nil)
	expired := authtest.Claims("a")
	expired["exp"] = time.Now().Add(-time.Hour).Unix()
	notYet := authtest.Claims("a")
	notYet["nbf"] = time.Now().Add(time.Hour).Unix()
	wrongIss := authtest.Claims("a")
	wrongIss["iss"] = "https://evil.example"
	noTeam := authtest.Claims("a")
	delete(noTeam, "team")
	noExp := authtest.Claims("a")
	delete(noExp, "exp")

	good := is.Token(t, "a")
	tampered := good[:len(good)-4] + "AAAA"
	none, err := jwt.NewWithClaims(jwt.SigningMethodNone, authtest.Claims("a")).SignedString(jwt.UnsafeAllowNoneSignatureType)
	require.NoError(t, err)
	// HS256 keyed with the RSA public key: the classic algorithm confusion.
	pubDER, err := x509.MarshalPKIXPublicKey(is.RSAPublic("rsa-1"))
	require.NoError(t, err)
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	hsTok := jwt.NewWithClaims(jwt.SigningMethodHS256, authtest.Claims("a"))
	hsTok.Header["kid"] = "rsa-1"
	confused, err := hsTok.SignedString(pubPEM)
	require.NoError(t, err)

	for name, tok := range map[string]string{
		"expired":                       is.Sign(t, jwt.SigningMethodRS256, "rsa-1", expired),
		"not yet valid":                 is.Sign(t, jwt.SigningMethodRS256, "rsa-1", notYet),
		"wrong issuer":                  is.Sign(t, jwt.SigningMethodRS256, "rsa-1", wrongIss),
		"no team claim":                 is.Sign(t, jwt.SigningMethodRS256, "rsa-1", noTeam),
		"no exp":                        is.Sign(t, jwt.SigningMethodRS256, "rsa-1", noExp),
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
	assert.Equal(t, CodeMultipleCredentials, aerr.Code)
	assert.Empty(t, r.Header.Values("X-Llmkube-Team"), "and carries no team")
}

// TestKeyRotationAndOutage: an unknown kid fetches the set again (rate
// limited); while the issuer is down the last good keys keep verifying.
func TestKeyRotationAndOutage(t *testing.T) {
	is := authtest.NewIssuer(t)
	a := newAuthorizer(t, is, nil)
	_, err := a.Authenticate(request(is.Token(t, "a")))
	require.Nil(t, err)

	is.AddRSA(t, "rsa-2") // the issuer rotates
	before := is.Fetches.Load()
	id, err := a.Authenticate(request(is.Sign(t, jwt.SigningMethodRS256, "rsa-2", authtest.Claims("b"))))
	require.Nil(t, err, "%v", err)
	assert.Equal(t, "b", id.Team)
	assert.Equal(t, before+1, is.Fetches.Load(), "the unknown kid caused one fetch")

	// A burst of unknown kids does not hammer the issuer.
	before = is.Fetches.Load()
	for range 20 {
		_, err := a.Authenticate(request(is.Sign(t, jwt.SigningMethodRS256, "rsa-2", authtest.Claims("b"))[:10] + "x.y.z"))
		require.NotNil(t, err)
	}
	stranger := jwt.NewWithClaims(jwt.SigningMethodRS256, authtest.Claims("c"))
	stranger.Header["kid"] = "unknown"
	k, _ := rsa.GenerateKey(rand.Reader, 2048)
	st, _ := stranger.SignedString(k)
	for range 20 {
		_, err := a.Authenticate(request(st))
		require.NotNil(t, err)
	}
	assert.LessOrEqual(t, is.Fetches.Load()-before, int32(1), "unknown kids are rate limited")

	is.Down.Store(true)
	id, err = a.Authenticate(request(is.Sign(t, jwt.SigningMethodES256, "ec-1", authtest.Claims("a"))))
	require.Nil(t, err, "cached keys serve while the issuer is down: %v", err)
	assert.Equal(t, "a", id.Team)
}

func TestIssuerDownAtColdStart(t *testing.T) {
	is := authtest.NewIssuer(t)
	is.Down.Store(true)
	a := newAuthorizer(t, is, nil)
	tok := is.Token(t, "a")
	_, err := a.Authenticate(request(tok))
	require.NotNil(t, err, "no key, no entry")
	assert.Equal(t, http.StatusUnauthorized, err.Status)

	is.Down.Store(false)
	require.Eventually(t, func() bool {
		_, err := a.Authenticate(request(tok))
		return err == nil
	}, 3*UnknownKIDRefresh, 200*time.Millisecond, "once the issuer is back, an unknown kid fetches the keys")
}

func TestAllowlists(t *testing.T) {
	is := authtest.NewIssuer(t)
	a := newAuthorizer(t, is, []proxyapi.Allowlist{{Team: "research", Models: []string{"qwen3-*"}}, {Team: "ops"}})
	assert.True(t, a.Allowed("research", "qwen3-32b"))
	assert.False(t, a.Allowed("research", "claude-opus"), "a listed team off its models")
	assert.True(t, a.Allowed("ops", "anything"), "no models: every model")
	assert.False(t, a.Allowed("sales", "qwen3-32b"), "an unlisted team: default deny")
	var none *Authorizer
	assert.True(t, none.Allowed("", "x"), "no policy.auth: every caller")
}

// TestAudiences: with audiences a token must name one of them in aud (a
// string or a list); without, aud is not read.
func TestAudiences(t *testing.T) {
	is := authtest.NewIssuer(t)
	open := newAuthorizer(t, is, nil)
	a := open.ForAudiences("https://models.example.com", "router")
	with := func(aud any) string { return is.TokenFor(t, "a", aud) }
	for name, tc := range map[string]struct {
		aud  any
		want string // "" when accepted
	}{
		"one of them":             {aud: "router"},
		"a list naming one":       {aud: []string{"https://other.example/mcp", "https://models.example.com"}},
		"another service's":       {aud: "https://other.example/mcp", want: "the bearer token is not valid: its audience does not name this resource"},
		"a list naming none":      {aud: []string{"x", "y"}, want: "the bearer token is not valid: its audience does not name this resource"},
		"no aud":                  {want: "the bearer token is not valid: it has no aud claim"},
		"a prefix of an audience": {aud: "https://models.example", want: "the bearer token is not valid: its audience does not name this resource"},
	} {
		_, err := a.Verify(context.Background(), with(tc.aud))
		if tc.want == "" {
			assert.Nil(t, err, name)
			continue
		}
		if assert.NotNil(t, err, name) {
			assert.Equal(t, tc.want, err.Msg, name)
			assert.Equal(t, http.StatusUnauthorized, err.Status, name)
		}
	}
	_, err := open.Verify(context.Background(), with("https://other.example/mcp"))
	assert.Nil(t, err, "without audiences, aud is not read")
}

// TestMissingClaimsAreNamed: a refused token's message names the claim it
// lacks (exp, iss or, with audiences, aud), not always exp.
func TestMissingClaimsAreNamed(t *testing.T) {
	is := authtest.NewIssuer(t)
	a := newAuthorizer(t, is, nil).ForAudiences("https://models.example.com/mcp")
	for claim, want := range map[string]string{
		"exp": "it has no exp claim",
		"iss": "it has no iss claim",
		"aud": "it has no aud claim",
	} {
		c := authtest.Claims("a")
		c["aud"] = "https://models.example.com/mcp"
		delete(c, claim)
		_, err := a.Verify(context.Background(), is.Sign(t, jwt.SigningMethodRS256, "rsa-1", c))
		if assert.NotNil(t, err, claim) {
			assert.Equal(t, "the bearer token is not valid: "+want, err.Msg, claim)
		}
	}
}
