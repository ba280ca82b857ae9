package proxy

import "github.com/llmkube/llmkube-compile/planes"

// Capabilities implements targets.Target: the router-proxy reads every
// field of the spec (the API was written for it), so its table has no row.
func (*Target) Capabilities() planes.Table { return planes.Table{} }
