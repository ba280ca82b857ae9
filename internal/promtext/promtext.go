// Package promtext reads the one thing of the Prometheus text exposition
// format that both the router-proxy (a model server's /metrics) and the
// controller benchmark (the API server's and controller's /metrics) read
// by hand: a sample's value.
package promtext

import (
	"strconv"
	"strings"
)

// SampleValue returns the value of a sample line after its metric name:
// what follows the closing brace of the labels (if any), before an optional
// timestamp. ok is false when there is no number there.
func SampleValue(afterName string) (v float64, ok bool) {
	if i := strings.LastIndexByte(afterName, '}'); i >= 0 {
		afterName = afterName[i+1:]
	}
	f := strings.Fields(afterName)
	if len(f) == 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(f[0], 64)
	return v, err == nil
}
