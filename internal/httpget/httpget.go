// Package httpget reads one small HTTP(S) resource within a deadline: the
// CLI's -f URLs and the controller's read of the router-proxy's status.
package httpget

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Get GETs url within timeout and returns at most limit bytes of a 200
// answer; any other status is an error naming the URL.
func Get(ctx context.Context, url string, timeout time.Duration, limit int64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err // *url.Error names the URL
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", url, err)
	}
	return data, nil
}
