package capability

import (
	"fmt"
	"sort"
	"strings"

	"github.com/llmkube/llmkube-compile/config/crd"
	"github.com/llmkube/llmkube-compile/ir"
)

// Verdict is what a data plane makes of a field of the spec, or of one value
// of it.
type Verdict int

const (
	// Supported: the plane reads the field and honours it. It is the verdict
	// of every field no row names: a plane's table lists only where it
	// departs from the API (TestEveryFieldHasAVerdict holds every field of
	// the CRD to it).
	Supported Verdict = iota
	// Ignored: the plane does not read the field; setting it earns a
	// FieldIgnored warning with the row's message.
	Ignored
	// Refused: the plane cannot do what the field asks; setting it is an
	// error with the row's reason and message.
	Refused
	// Required: the plane cannot run without the field; leaving it unset is
	// an error with the row's reason and message.
	Required
)

func (v Verdict) String() string {
	switch v {
	case Supported:
		return "Supported"
	case Ignored:
		return "Ignored"
	case Refused:
		return "Refused"
	case Required:
		return "Required"
	}
	return fmt.Sprintf("Verdict(%d)", int(v))
}

// Row is one row of a data plane's capability table: a field of the
// spec (or one value of it: a feature, such as strategy Shadow) and the
// plane's verdict on it. Each plane keeps its table in its own folder
// (targets/<plane>/capabilities.go); the compiler applies every row the same
// way and names no plane.
type Row struct {
	// Path is the field's path, with [*] for every element of a list:
	// "spec.proxy.replicas", "spec.backends[*].balancing". A row names a
	// Path or a Feature.
	Path string
	// Feature is what no one field decides (Features): the compiler reads
	// its verdict (Table.Supports) and the plane's emitter reports it, with
	// the row's reason, where the spec and its references ask for it.
	Feature Feature
	// Value, when set, limits the row to that value ("endpoint", "Shadow",
	// "true").
	Value string
	// Except, when set, limits the row to every value but this one.
	Except string
	// When, when set, limits the row to specs whose field at When.Path holds
	// When.Value; Unless turns the row off for those. Both read the
	// defaulted spec.
	When, Unless *FieldValue
	// Verdict is what the plane makes of the field.
	Verdict Verdict
	// Reason is the diagnostic's reason for Refused and Required rows and
	// for feature rows (an Ignored field row's is always FieldIgnored).
	Reason string
	// Message is the diagnostic's message: what the field does and why this
	// plane does without it, with a hint. "{value}" stands for the value
	// found; "{spec.x.y}" for the value of another field of the spec.
	Message string
}

// Feature is a capability that no single field of the spec names.
type Feature string

const (
	// SwapLeases: the plane swaps a ModelPool's members into its GPU slot,
	// serializing the swaps across its replicas with one Lease per pool,
	// named after the pool (wellknown.PoolLeaseName).
	SwapLeases Feature = "SwapLeases"
	// MessagesAPI and ResponsesAPI: the plane serves a client's Anthropic
	// Messages (POST /v1/messages) or OpenAI Responses (POST /v1/responses)
	// request under the router's rules, to whatever backend they choose.
	// No field asks for them (clients do, per request): a routing test
	// whose request.api names one reads the verdict (routingtest), and the
	// emitter gives nothing (PerRequest).
	MessagesAPI  Feature = "MessagesAPI"
	ResponsesAPI Feature = "ResponsesAPI"
)

// Features are every Feature a row may name.
func Features() []Feature { return []Feature{SwapLeases, MessagesAPI, ResponsesAPI} }

// PerRequest reports whether the feature is decided per request, by the
// API a client speaks, rather than by the spec: the compile never reports
// it, a routing test of a request in that API does.
func (f Feature) PerRequest() bool { return f == MessagesAPI || f == ResponsesAPI }

// FieldValue is a field of the spec (a path as in Row.Path) and a value.
type FieldValue struct {
	Path, Value string
}

// Table is a data plane's capability table: its rows, and the reasons its
// emitter gives on top of them (Emits).
type Table struct {
	Rows []Row
	// Emits are the reasons of the diagnostics the plane's emitter gives
	// besides its rows' (a feature row's reason, an Ignored or Refused row
	// the emitter checks again): what the fields alone do not decide (a
	// combination, a limit, an encoding). A test holds the emitter's
	// source to them, each a named constant of the plane's folder.
	Emits []string
}

// Tables returns the capability table of a data plane; empty for a plane
// this build does not hold.
type Tables func(dp ir.DataPlane) Table

// Reads reports whether the plane reads the field at path: no row covering
// it (Covering) ignores or refuses it outright, whatever its value and in
// every spec. The compiler checks what a field asks for (its consistency,
// the references it needs) only where the plane reads it, so a check
// follows what the table declares, never which plane it is; a row that
// ignores or refuses only some values or some specs (Value, Except, When,
// Unless) leaves the field read otherwise, and the check asks the row's
// condition itself where it matters.
func (t Table) Reads(path string) bool {
	for _, r := range t.Covering(path) {
		outright := r.Value == "" && r.Except == "" && r.When == nil && r.Unless == nil
		if outright && (r.Verdict == Ignored || r.Verdict == Refused) {
			return false
		}
	}
	return true
}

// Supports reports whether the plane supports the feature: no row names it
// with another verdict.
func (t Table) Supports(f Feature) bool {
	for _, r := range t.Rows {
		if r.Feature == f && r.Verdict != Supported {
			return false
		}
	}
	return true
}

// Refusal is the row by which the plane does not support the feature,
// false when it does.
func (t Table) Refusal(f Feature) (Row, bool) {
	if f == "" {
		return Row{}, false // a field's row names no feature
	}
	for _, r := range t.Rows {
		if r.Feature == f && r.Verdict != Supported {
			return r, true
		}
	}
	return Row{}, false
}

// Covering are the rows that decide the plane's verdict on the field at
// path: the rows naming it, or else those naming its nearest enclosing
// field (an Ignored or Refused row on spec.endpoint covers
// spec.endpoint.type; a Required row covers only its own field). None
// means Supported.
func (t Table) Covering(path string) []Row {
	for p := path; p != ""; {
		var out []Row
		for _, r := range t.Rows {
			if r.Path == p && (p == path || r.Verdict != Required) {
				out = append(out, r)
			}
		}
		if len(out) > 0 {
			return out
		}
		i := strings.LastIndex(p, ".")
		if i < 0 {
			break
		}
		p = strings.TrimSuffix(p[:i], "[*]")
	}
	return nil
}

// SpecFields are the paths of every field of the ModelRouter spec, as the
// CRD's storage version declares them, in Row.Path's form
// ("spec.backends[*].balancing"), sorted. Fields inside a map or an
// embedded Kubernetes type (x-kubernetes-preserve-unknown-fields) end at
// the map's path.
func SpecFields() []string {
	out := make([]string, 0, len(specFields))
	for p := range specFields {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// specFields is the CRD's spec, read once.
var specFields = func() map[string]bool {
	out := map[string]bool{}
	schemaFields(storageSchema().Properties["spec"], "spec", out)
	return out
}()

func schemaFields(n crd.SchemaNode, prefix string, out map[string]bool) {
	if n.Type == "array" && n.Items != nil {
		n = *n.Items
		prefix += "[*]"
	}
	for name, child := range n.Properties {
		p := prefix + "." + name
		out[p] = true
		schemaFields(child, p, out)
	}
}

// storageSchema is the openAPIV3Schema of the CRD's storage version.
func storageSchema() crd.SchemaNode {
	var n crd.SchemaNode
	if err := crd.DecodeSchema("", &n); err != nil {
		panic("capability: " + err.Error())
	}
	return n
}

// IsSpecField reports whether path names a field of the spec; a path below
// a list written without [*] is not one.
func IsSpecField(path string) bool { return specFields[path] }
