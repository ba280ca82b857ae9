// Package capability is what the compiler and every plane's folder agree on about
// data planes, with neither importing the other: the planes the API accepts
// (Planes, the CRD's enum of spec.dataPlane), the fields of the spec
// (SpecFields) and the row of a plane's capability table (Row). It
// imports nothing of ours but ir and config/crd (test/architecture), so a
// plane's capabilities.go reads no compiler and no API type.
package capability

import "github.com/llmkube/llmkube-compile/ir"

// known is the CRD's enum of spec.dataPlane, read once.
var known = func() []ir.DataPlane {
	var out []ir.DataPlane
	for _, dp := range storageSchema().Properties["spec"].Properties["dataPlane"].Enum {
		out = append(out, ir.DataPlane(dp))
	}
	if len(out) == 0 {
		panic("capability: the embedded ModelRouter CRD has no spec.dataPlane enum")
	}
	return out
}()

// Planes are the data planes the API accepts (the CRD's enum of
// spec.dataPlane), built into this binary or not.
func Planes() []ir.DataPlane {
	return append([]ir.DataPlane(nil), known...)
}
