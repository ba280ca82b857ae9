package auth

import (
	"context"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/auth/authtest"
)

const (
	keyA = "sk-analytics-0123456789abcdef"
	keyB = "sk-partner-fedcba9876543210"
)

// keyAuthorizer is the Authorizer of sources, with is's JWT beside them
// when is is not nil.
func keyAuthorizer(t *testing.T, is *authtest.Issuer, sources ...proxyapi.APIKeySource) *Authorizer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	a := &proxyapi.Auth{APIKeys: sources}
	var client *http.Client
	if is != nil {
		a.JWT = is.JWT()
		client = is.Server.Client()
	}
	cfg := &proxyapi.Config{APIVersion: proxyapi.APIVersion, Policy: proxyapi.Policy{Auth: a}}
	cfg.SetDefaults()
	authz, err := New(ctx, cfg.Policy.Auth, client, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	require.NotNil(t, authz)
	return authz
}

func keyDirs(t *testing.T) (string, string) {
	root := t.TempDir()
	a, b := filepath.Join(root, "analytics-keys"), filepath.Join(root, "partner-keys")
	authtest.WriteSecret(t, a, map[string]string{"batch": keyA + "\n"})
	authtest.WriteSecret(t, b, map[string]string{"trial": keyB})
	return a, b
}

func TestAPIKeyAuthenticatesItsTeam(t *testing.T) {
	a, b := keyDirs(t)
	authz := keyAuthorizer(t, nil,
		proxyapi.APIKeySource{SecretName: "analytics-keys", Team: "analytics", Dir: a},
		proxyapi.APIKeySource{SecretName: "partner-keys", Team: "partner", Dir: b})
	for name, r := range map[string]*http.Request{
		"bearer":    request(keyA, "X-Llmkube-Team", "partner"),
		"x-api-key": request("", "X-Api-Key", keyA, "X-Llmkube-Team", "partner"),
	} {
		id, err := authz.Authenticate(r)
		require.Nil(t, err, name)
		assert.Equal(t, Identity{Team: "analytics", Key: "analytics-keys/batch"}, id, name)
		assert.Equal(t, []string{"analytics"}, r.Header.Values("X-Llmkube-Team"), "%s: the forged team is replaced by the key's", name)
	}
	id, err := authz.Authenticate(request(keyB))
	require.Nil(t, err)
	assert.Equal(t, Identity{Team: "partner", Key: "partner-keys/trial"}, id)
}

func TestAPIKeyRefusals(t *testing.T) {
	a, b := keyDirs(t)
	past := time.Now().Add(-time.Minute)
	authz := keyAuthorizer(t, nil,
		proxyapi.APIKeySource{SecretName: "analytics-keys", Team: "analytics", Dir: a},
		proxyapi.APIKeySource{SecretName: "partner-keys", Team: "partner", Dir: b, ExpiresAt: &past})
	for name, tc := range map[string]struct {
		r    *http.Request
		code string
	}{
		"no credential":            {request(""), CodeMissingToken},
		"an unknown key":           {request("sk-guess"), CodeInvalidAPIKey},
		"a key's prefix":           {request(keyA[:10]), CodeInvalidAPIKey},
		"a JWT without jwt":        {request("a.b.c"), CodeInvalidAPIKey},
		"an expired key":           {request(keyB), CodeExpiredAPIKey},
		"an expired x-api-key":     {request("", "X-Api-Key", keyB), CodeExpiredAPIKey},
		"basic auth, not a bearer": {request("", "Authorization", "Basic "+keyA), CodeMissingToken},
	} {
		_, err := authz.Authenticate(tc.r)
		require.NotNil(t, err, name)
		assert.Equal(t, http.StatusUnauthorized, err.Status, name)
		assert.Equal(t, tc.code, err.Code, name)
		assert.NotContains(t, err.Msg, keyA, name)
		assert.NotContains(t, err.Msg, keyB, name)
	}
}

// A request that carries its credential twice (two Authorization headers,
// or two x-api-key and no Authorization) is refused 400
// multiple_credentials, saying which header, whatever the values: which
// one is meant is not the router's to guess.
func TestACredentialSentTwiceIsRefused(t *testing.T) {
	a, b := keyDirs(t)
	authz := keyAuthorizer(t, nil,
		proxyapi.APIKeySource{SecretName: "analytics-keys", Team: "analytics", Dir: a},
		proxyapi.APIKeySource{SecretName: "partner-keys", Team: "partner", Dir: b})
	for name, tc := range map[string]struct {
		r      *http.Request
		header string
	}{
		"two x-api-key values":            {request("", "X-Api-Key", keyA, "X-Api-Key", keyA), "x-api-key"},
		"two x-api-key, two teams":        {request("", "X-Api-Key", keyA, "X-Api-Key", keyB), "x-api-key"},
		"two Authorization headers":       {request(keyA, "Authorization", "Bearer "+keyB), "Authorization"},
		"a bearer and a basic":            {request(keyA, "Authorization", "Basic "+keyB), "Authorization"},
		"two Authorization and x-api-key": {request(keyA, "Authorization", "Bearer "+keyA, "X-Api-Key", keyB), "Authorization"},
	} {
		_, err := authz.Authenticate(tc.r)
		require.NotNil(t, err, name)
		assert.Equal(t, http.StatusBadRequest, err.Status, name)
		assert.Equal(t, CodeMultipleCredentials, err.Code, name)
		assert.Equal(t, "the request carries 2 "+tc.header+" headers: send one credential", err.Msg, name)
	}
	is := authtest.NewIssuer(t)
	jwtOnly := newAuthorizer(t, is, nil)
	_, err := jwtOnly.Authenticate(request(is.Token(t, "research"), "Authorization", "Bearer "+is.Token(t, "analytics")))
	require.NotNil(t, err, "two bearer tokens, jwt only")
	assert.Equal(t, CodeMultipleCredentials, err.Code)
}

// A request sends Authorization and x-api-key: Authorization is its
// credential, whatever x-api-key holds.
func TestAuthorizationWinsOverXAPIKey(t *testing.T) {
	a, b := keyDirs(t)
	authz := keyAuthorizer(t, nil,
		proxyapi.APIKeySource{SecretName: "analytics-keys", Team: "analytics", Dir: a},
		proxyapi.APIKeySource{SecretName: "partner-keys", Team: "partner", Dir: b})
	id, err := authz.Authenticate(request(keyB, "X-Api-Key", keyA))
	require.Nil(t, err)
	assert.Equal(t, "partner", id.Team)
	_, err = authz.Authenticate(request("sk-guess", "X-Api-Key", keyA))
	require.NotNil(t, err, "an unknown bearer is refused, not rescued by x-api-key")
	assert.Equal(t, CodeInvalidAPIKey, err.Code)
}

// With jwt and API keys, a key is a key and a JWT keeps the JWT's
// semantics: verified against the issuer, refused as a token.
func TestJWTBesideAPIKeys(t *testing.T) {
	is := authtest.NewIssuer(t)
	a, _ := keyDirs(t)
	authz := keyAuthorizer(t, is, proxyapi.APIKeySource{SecretName: "analytics-keys", Team: "analytics", Dir: a})
	id, err := authz.Authenticate(request(is.Token(t, "research")))
	require.Nil(t, err)
	assert.Equal(t, Identity{Team: "research"}, id)
	id, err = authz.Authenticate(request(keyA))
	require.Nil(t, err)
	assert.Equal(t, Identity{Team: "analytics", Key: "analytics-keys/batch"}, id)
	expired := authtest.Claims("research")
	expired["exp"] = time.Now().Add(-time.Hour).Unix()
	_, err = authz.Authenticate(request(is.Sign(t, jwt.SigningMethodRS256, "rsa-1", expired)))
	require.NotNil(t, err)
	assert.Equal(t, CodeInvalidToken, err.Code, "a JWT-shaped credential is a token: its refusal is the JWT's")
	assert.Contains(t, err.Msg, "expired")
	_, err = authz.Authenticate(request("sk-guess"))
	require.NotNil(t, err)
	assert.Equal(t, CodeInvalidAPIKey, err.Code, "a credential that is no JWT is judged as a key")
}

// Rotation: the kubelet swaps ..data to a new directory; a Reload takes the
// new key and refuses the old, without a new Authorizer.
func TestAPIKeyRotation(t *testing.T) {
	a, _ := keyDirs(t)
	authz := keyAuthorizer(t, nil, proxyapi.APIKeySource{SecretName: "analytics-keys", Team: "analytics", Dir: a})
	store := authz.APIKeys()
	gen := store.Status().Generation
	assert.False(t, store.Reload(), "nothing changed")
	assert.Equal(t, gen, store.Status().Generation)

	const rotated = "sk-analytics-rotated-0000"
	authtest.WriteSecret(t, a, map[string]string{"batch-2": rotated})
	require.True(t, store.Reload())
	assert.Equal(t, gen+1, store.Status().Generation)
	_, err := authz.Authenticate(request(keyA))
	require.NotNil(t, err, "the old key is refused after rotation")
	assert.Equal(t, CodeInvalidAPIKey, err.Code)
	id, err := authz.Authenticate(request(rotated))
	require.Nil(t, err)
	assert.Equal(t, Identity{Team: "analytics", Key: "analytics-keys/batch-2"}, id)
}

func TestAPIKeyStoreProblems(t *testing.T) {
	root := t.TempDir()
	a, b, none := filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "none")
	authtest.WriteSecret(t, a, map[string]string{"one": keyA, "empty": "  \n"})
	authtest.WriteSecret(t, none, map[string]string{}) // a Secret with no data: ..data and nothing else
	authtest.WriteSecret(t, b, map[string]string{"two": keyA, "three": keyB})
	authz := keyAuthorizer(t, nil,
		proxyapi.APIKeySource{SecretName: "a", Team: "ta", Dir: a},
		proxyapi.APIKeySource{SecretName: "b", Team: "tb", Dir: b},
		proxyapi.APIKeySource{SecretName: "missing", Team: "tm", Dir: filepath.Join(root, "missing")},
		proxyapi.APIKeySource{SecretName: "none", Team: "tn", Dir: none})
	st := authz.APIKeys().Status()
	assert.Equal(t, []string{"b/three"}, st.Keys)
	joined := strings.Join(st.Problems, "\n")
	assert.Contains(t, joined, "keys a/one, b/two have the same value; none of them is accepted")
	assert.Contains(t, joined, "key a/empty is empty")
	assert.Contains(t, joined, "secret missing cannot be read")
	assert.Contains(t, joined, "secret none holds no keys")
	assert.NotContains(t, joined, keyA)
	_, err := authz.Authenticate(request(keyA))
	require.NotNil(t, err, "a value two names hold proves neither team")
	assert.Equal(t, CodeInvalidAPIKey, err.Code)
}
