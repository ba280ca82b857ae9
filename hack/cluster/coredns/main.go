// Command coredns is the cluster DNS of `make e2e-cluster`: CoreDNS, built
// from its Go module with only the plugins a one-node test cluster needs.
// This is CoreDNS's own compile-time configuration (a main that sets
// dnsserver.Directives and imports the plugins), so no plugin that would
// forward a query off the machine is linked in: a name outside the cluster
// gets SERVFAIL/NXDOMAIN, never an upstream lookup.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"
)

// directives is the plugin order of CoreDNS's plugin.cfg, restricted to
// the plugins imported above.
var directives = []string{
	"ready",
	"health",
	"errors",
	"log",
	"loadbalance",
	"cache",
	"kubernetes",
}

func init() { dnsserver.Directives = directives }

func main() { coremain.Run() }
