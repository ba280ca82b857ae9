package auth

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy/internal/tick"
)

// The codes of the 401s an API key gets besides missing_token (an OpenAI
// error object's code; invalid_api_key is OpenAI's own).
const (
	CodeInvalidAPIKey = "invalid_api_key"
	CodeExpiredAPIKey = "expired_api_key"
)

// KeyReload is how often the router-proxy reads the API keys' Secret
// directories again. The kubelet updates a mounted Secret by writing a new
// timestamped directory and swapping the ..data symlink to it; a read every
// KeyReload takes the new files whatever way they changed (fsnotify would
// need a watch per directory re-armed on every swap). Reading a few small
// files is cheap; the key set is swapped only when what it reads differs.
const KeyReload = 2 * time.Second

// maxKeyBytes bounds one key file: an API key is a short random string, a
// larger file is a mistake (a whole kubeconfig, say) and is refused.
const maxKeyBytes = 4096

// KeyStore holds policy.auth.apiKeys in memory as SHA-256 digests, never the
// keys: a request's key is hashed and looked up in a map keyed by digest.
// That lookup is constant-time enough: its timing depends on the digest of
// what the caller sent, which the caller cannot steer toward a stored
// digest byte by byte (finding an input whose SHA-256 shares a prefix with
// a stored one is the preimage problem), so timing tells nothing about a
// key. (The map's equality on [32]byte may stop at the first differing
// byte; that, too, only tells how far two digests agree.) The key's value
// is never kept: not in the store, not in a log line, status or error.
type KeyStore struct {
	sources []proxyapi.APIKeySource
	log     *slog.Logger
	now     func() time.Time
	set     atomic.Pointer[keySet]
	// gen counts the key sets taken (proxyapi.APIKeyStatus.Generation).
	gen    atomic.Int64
	reload sync.Mutex // one read of the directories at a time
}

// keySet is one read of every Secret directory.
type keySet struct {
	byDigest map[[sha256.Size]byte]apiKey
	// fingerprint digests what was read (names, digests, problems): a read
	// that finds the same fingerprint changes nothing.
	fingerprint [sha256.Size]byte
	names       []string
	problems    []string
}

// apiKey is what a stored key proves: its name, its team, its expiry.
type apiKey struct {
	name, team string
	expires    *time.Time
}

// NewKeyStore reads sources once and returns their store. A directory that
// cannot be read is a problem of the store (its keys admit nobody), not an
// error: the Secret may be created later, and a router whose one team's
// Secret is missing still serves every other caller.
func NewKeyStore(sources []proxyapi.APIKeySource, log *slog.Logger) *KeyStore {
	k := &KeyStore{sources: slices.Clone(sources), log: log, now: time.Now}
	k.Reload()
	return k
}

// Reload reads the Secret directories again and takes what they hold when
// it differs from the key set in use; it reports whether it did.
func (k *KeyStore) Reload() bool {
	k.reload.Lock()
	defer k.reload.Unlock()
	next := k.read()
	if cur := k.set.Load(); cur != nil && cur.fingerprint == next.fingerprint {
		return false
	}
	k.set.Store(next)
	gen := k.gen.Add(1)
	for _, p := range next.problems {
		k.log.Warn("policy.auth.apiKeys: a key is not accepted", "problem", p)
	}
	k.log.Info("policy.auth.apiKeys loaded", "generation", gen, "keys", len(next.names))
	return true
}

// Run reads the directories every interval until ctx ends.
func (k *KeyStore) Run(ctx context.Context, interval time.Duration) {
	tick.Every(ctx, interval, func() { k.Reload() })
}

// read is one pass over every source's directory. A value that is a key of
// two names is dropped under both: which team it proves would be a guess.
func (k *KeyStore) read() *keySet {
	s := &keySet{byDigest: map[[sha256.Size]byte]apiKey{}}
	dup := map[[sha256.Size]byte][]string{}
	for _, src := range k.sources {
		entries, err := os.ReadDir(src.Dir)
		if err != nil {
			s.problems = append(s.problems, fmt.Sprintf("secret %s cannot be read (%s); its keys admit nobody", src.SecretName, pathErr(err)))
			continue
		}
		seen := 0
		for _, e := range entries {
			// The kubelet's ..data symlink and ..<timestamp> directories
			// are not keys; a data key never begins with "..".
			if strings.HasPrefix(e.Name(), "..") {
				continue
			}
			seen++
			name := src.SecretName + "/" + e.Name()
			raw, err := readKey(filepath.Join(src.Dir, e.Name()))
			if err != nil {
				s.problems = append(s.problems, fmt.Sprintf("key %s: %v", name, err))
				continue
			}
			value := strings.TrimSpace(string(raw))
			if value == "" {
				s.problems = append(s.problems, fmt.Sprintf("key %s is empty", name))
				continue
			}
			d := sha256.Sum256([]byte(value))
			if prev, taken := s.byDigest[d]; taken || dup[d] != nil {
				if taken {
					dup[d] = []string{prev.name}
					delete(s.byDigest, d)
				}
				dup[d] = append(dup[d], name)
				continue
			}
			s.byDigest[d] = apiKey{name: name, team: src.Team, expires: src.ExpiresAt}
		}
		if seen == 0 {
			s.problems = append(s.problems, fmt.Sprintf("secret %s holds no keys (is it created?)", src.SecretName))
		}
	}
	for _, names := range dup {
		s.problems = append(s.problems, fmt.Sprintf("keys %s have the same value; none of them is accepted", strings.Join(names, ", ")))
	}
	slices.Sort(s.problems)
	h := sha256.New()
	for _, key := range s.byDigest {
		s.names = append(s.names, key.name)
	}
	slices.Sort(s.names)
	for _, n := range s.names {
		h.Write([]byte(n + "\x00"))
	}
	digests := make([][sha256.Size]byte, 0, len(s.byDigest))
	for d := range s.byDigest {
		digests = append(digests, d)
	}
	slices.SortFunc(digests, func(a, b [sha256.Size]byte) int { return strings.Compare(string(a[:]), string(b[:])) })
	for _, d := range digests {
		h.Write(d[:])
	}
	for _, p := range s.problems {
		h.Write([]byte(p + "\x00"))
	}
	copy(s.fingerprint[:], h.Sum(nil))
	return s
}

// readKey reads one key file (through the kubelet's symlinks), refusing a
// directory or a file over maxKeyBytes.
func readKey(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot be read (%s)", pathErr(err))
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("cannot be read (%s)", pathErr(err))
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("is not a file")
	}
	if st.Size() > maxKeyBytes {
		return nil, fmt.Errorf("is %d bytes, more than %d: an API key is a short string", st.Size(), maxKeyBytes)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxKeyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("cannot be read (%s)", pathErr(err))
	}
	if len(b) > maxKeyBytes {
		return nil, fmt.Errorf("is more than %d bytes: an API key is a short string", maxKeyBytes)
	}
	return b, nil
}

// pathErr is err without the path (the path is the Secret's directory,
// named already).
func pathErr(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err.Error()
	}
	return err.Error()
}

// lookup finds the key raw: its identity, an expired key's refusal, or
// found false when raw is no key of the store.
func (k *KeyStore) lookup(raw string) (id Identity, aerr *Error, found bool) {
	key, ok := k.set.Load().byDigest[sha256.Sum256([]byte(raw))]
	if !ok {
		return Identity{}, nil, false
	}
	if key.expires != nil && !k.now().Before(*key.expires) {
		return Identity{}, &Error{http.StatusUnauthorized, CodeExpiredAPIKey, "the API key " + key.name + " expired at " + key.expires.UTC().Format(time.RFC3339)}, true
	}
	return Identity{Team: key.team, Key: key.name}, nil, true
}

// Status is the store as proxyapi.Status reports it: names, never values.
func (k *KeyStore) Status() *proxyapi.APIKeyStatus {
	s := k.set.Load()
	return &proxyapi.APIKeyStatus{Generation: k.gen.Load(), Keys: slices.Clone(s.names), Problems: slices.Clone(s.problems)}
}

// KeyIdentity is the identity raw proves when it is an API key of a's store
// (found false otherwise, and without API keys), with the key's expiry
// (zero: none), for callers that take a bearer token themselves (/mcp).
func (a *Authorizer) KeyIdentity(raw string) (id Identity, expires time.Time, aerr *Error, found bool) {
	if a == nil || a.apiKeys == nil {
		return Identity{}, time.Time{}, nil, false
	}
	id, aerr, found = a.apiKeys.lookup(raw)
	if found && aerr == nil {
		if key := a.apiKeys.set.Load().byDigest[sha256.Sum256([]byte(raw))]; key.expires != nil {
			expires = *key.expires
		}
	}
	return id, expires, aerr, found
}
