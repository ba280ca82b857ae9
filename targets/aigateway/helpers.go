package aigateway

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/llmkube/llmkube-compile/diag"
)

// What several steps write the same way: Gateway API values, durations and
// policy targets.

func ptr[T any](v T) *T { return &v }

// routeTarget is a policy's target: an HTTPRoute the AI Gateway generates
// from an AIGatewayRoute (same name), or one rule of it (section).
func routeTarget(route, section string) gwapiv1.LocalPolicyTargetReferenceWithSectionName {
	t := gwapiv1.LocalPolicyTargetReferenceWithSectionName{
		LocalPolicyTargetReference: gwapiv1.LocalPolicyTargetReference{Group: gatewayAPIGrp, Kind: httpRouteKind, Name: gwapiv1.ObjectName(route)},
	}
	if section != "" {
		t.SectionName = ptr(gwapiv1.SectionName(section))
	}
	return t
}

// backendPath is the field path of a backend named by a rule.
func (e *emitter) backendPath(name string) *field.Path {
	b, _ := e.r.Backend(name)
	return diag.Backend(b.Index)
}

// gwDuration formats a duration in the Gateway API format
// (^([0-9]{1,5}(h|m|s|ms)){1,4}$); ok is false when it has sub-millisecond
// precision or too many hours.
func gwDuration(d time.Duration) (string, bool) {
	if d < 0 || d%time.Millisecond != 0 {
		return "", false
	}
	if d == 0 {
		return "0s", true
	}
	h := d / time.Hour
	d -= h * time.Hour
	m := d / time.Minute
	d -= m * time.Minute
	s := d / time.Second
	d -= s * time.Second
	ms := d / time.Millisecond
	if h > 99999 {
		return "", false
	}
	var b strings.Builder
	for _, part := range []struct {
		n    time.Duration
		unit string
	}{{h, "h"}, {m, "m"}, {s, "s"}, {ms, "ms"}} {
		if part.n > 0 {
			fmt.Fprintf(&b, "%d%s", part.n, part.unit)
		}
	}
	return b.String(), true
}

func (e *emitter) duration(at *field.Path, d time.Duration) string {
	s, ok := gwDuration(d)
	if !ok {
		e.diags.ErrorAt(at, ReasonDurationNotExpressible,
			"%s cannot be written as a Gateway API duration (whole milliseconds, at most 99999h); round it to milliseconds", d)
	}
	return s
}
