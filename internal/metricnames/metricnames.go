// Package metricnames reads the metric family names a Prometheus collector
// describes, registered series included before they have a child: the
// chart's alerts and dashboard are checked against the names the binaries
// register, not against a list kept by hand.
package metricnames

import (
	"regexp"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
)

// fqName is how client_golang's Desc.String prints the family name (Desc
// has no accessor for it).
var fqName = regexp.MustCompile(`^Desc\{fqName: "([^"]+)"`)

// Of returns the sorted family names c describes.
func Of(c prometheus.Collector) []string {
	ch := make(chan *prometheus.Desc)
	go func() { c.Describe(ch); close(ch) }()
	var out []string
	for d := range ch {
		if m := fqName.FindStringSubmatch(d.String()); m != nil && !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	slices.Sort(out)
	return out
}
