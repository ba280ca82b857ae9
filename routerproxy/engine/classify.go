package engine

// A request's data classification: computed once per request, from the
// classification header and (detector and hybrid modes) the content
// classifier's findings in the body, and read by routing, the audit, the
// metrics and the traces.

import (
	"slices"
	"strings"

	"github.com/llmkube/llmkube-compile/routerproxy/classifier"
)

// Classification is a request's data classification, computed once by
// Classify from its header and body, and handed as one value to everything
// that reads it: routing (Route, Matches), the audit, the metrics and the
// traces.
type Classification struct {
	// Classes are the request's classifications, sorted; when any is
	// sensitive, only the sensitive ones (see sensitiveOnly).
	Classes []string
	// Source says where they came from, for the audit: "header",
	// "detector", "header,detector", or "" when it has none.
	Source string
	// Detected is what the content classifier found in the body (nothing
	// in header-only mode or without a body).
	Detected classifier.Set
	// rulesForClassOnly: the request may match only the rules for its
	// classification. In the detector and hybrid modes a request classified
	// sensitive skips every rule without a dataClassification match and
	// never takes the default route, so content the classifier found stays
	// on the fail-closed, local rules written for it (a catch-all rule
	// before them cannot take it to a cloud backend).
	rulesForClassOnly bool
}

// String is the classifications joined by ",", as the audit records them.
func (c Classification) String() string { return strings.Join(c.Classes, ",") }

// Classify computes a request's classification, by the mode: header-only,
// the classification header's; detector, the content classifier's findings
// in body; hybrid, both together (a client can add a classification, never
// remove one the detector found). body is the request body, valid JSON, or
// nil when it was not read (then the detector has nothing to read).
func (e *Engine) Classify(h map[string][]string, body []byte) Classification {
	var c Classification
	if e.readsContent && body != nil {
		c.Detected = classifier.Body(body)
	}
	var out []string
	if e.readsHeader {
		out = e.headerClasses(h, out)
	}
	for _, class := range c.Detected.Classes() {
		if !slices.Contains(out, class) {
			out = append(out, class)
		}
	}
	c.Classes = e.sensitiveOnly(out)
	header := e.readsHeader && slices.ContainsFunc(h[e.classKey], func(v string) bool { return strings.Trim(v, " ,") != "" })
	switch detector := !c.Detected.Empty(); {
	case header && detector:
		c.Source = "header,detector"
	case detector:
		c.Source = "detector"
	case header:
		c.Source = "header"
	}
	c.rulesForClassOnly = e.readsContent && slices.ContainsFunc(c.Classes, func(class string) bool { return e.sensitive[class] })
	return c
}

// headerClasses appends the classifications a classification header
// carries: every comma-separated value of every instance of the header,
// trimmed, lowercased, deduplicated.
func (e *Engine) headerClasses(h map[string][]string, out []string) []string {
	for _, inst := range h[e.classKey] {
		for _, v := range strings.Split(inst, ",") {
			v = strings.ToLower(strings.TrimSpace(v))
			if v == "" || slices.Contains(out, v) {
				continue
			}
			out = append(out, v)
		}
	}
	return out
}

// sensitiveOnly sorts the classifications; a request that carries any
// sensitive one is sensitive, and then only its sensitive values are kept,
// so `public` sent beside `pii` (or beside what the detector found) can
// never steer it to a rule for public data. Reading only the first value
// was a fail-closed bypass.
func (e *Engine) sensitiveOnly(out []string) []string {
	if slices.ContainsFunc(out, func(v string) bool { return e.sensitive[v] }) {
		out = slices.DeleteFunc(out, func(v string) bool { return !e.sensitive[v] })
	}
	slices.Sort(out)
	return out
}
