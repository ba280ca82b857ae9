package routerproxy

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newRequest builds what http.NewRequestWithContext builds, from the
// cache or not.
func TestUpstreamRequestAsNetHTTPBuildsIt(t *testing.T) {
	type view struct {
		Method, URL, Host, Proto string
		ContentLength            int64
		Header                   http.Header
		Body, Again              string
	}
	see := func(r *http.Request) view {
		b, err := io.ReadAll(r.Body)
		require.NoError(t, err)
		rc, err := r.GetBody()
		require.NoError(t, err)
		again, err := io.ReadAll(rc)
		require.NoError(t, err)
		return view{r.Method, r.URL.String(), r.Host, r.Proto, r.ContentLength, r.Header, string(b), string(again)}
	}
	type ctxKey struct{}
	ctx := context.WithValue(context.Background(), ctxKey{}, "x")
	for _, base := range []string{"http://svc.ns:8000", "http://svc.ns:8000/v1/", "https://api.example/openai/v1"} {
		bu, err := url.Parse(base)
		require.NoError(t, err)
		b := &backendRT{base: bu}
		for _, in := range []string{"/v1/chat/completions", "/v1/embeddings?x=1", "/v1/chat/completions", "/v1/a%2Fb"} {
			iu, err := url.Parse(in)
			require.NoError(t, err)
			for _, body := range []string{`{"model":"m"}`, ""} {
				want, err := http.NewRequestWithContext(ctx, http.MethodPost, joinURL(bu, iu.Path, iu.RawQuery), bytes.NewReader([]byte(body)))
				require.NoError(t, err)
				got, err := b.newRequest(ctx, iu, []byte(body))
				require.NoError(t, err)
				if d := cmp.Diff(see(want), see(got)); d != "" {
					t.Errorf("%s + %s: -net/http +newRequest:\n%s", base, in, d)
				}
				assert.Equal(t, "x", got.Context().Value(ctxKey{}))
			}
		}
	}
}
