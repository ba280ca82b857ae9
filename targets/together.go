package targets

import (
	"sort"

	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/ir"
)

// RouteOverlap is what a gateway plane's Together check knows of its own
// routers; Check walks them the same way for every plane: routers grouped
// by the gateway they attach to (ir.Router.AttachedGateway), each pair of a group that shares a
// listener or host compared by the matches of their routes, and both
// routers of a pair whose matches one request can meet refused, naming
// each other. M is the plane's match.
type RouteOverlap[M any] struct {
	// Group, when set, checks one gateway's routers as a whole (members
	// are their indexes in rs, in order) before their pairs; with first,
	// only rs[0] (members[0]) is asked for.
	Group func(rs []*ir.Router, key string, members []int, out []diag.List, first bool)
	// Share reports whether two routers of one gateway can take one
	// request, and where (listener, hostnames) for the message.
	Share func(a, b *ir.Router) (where string, ok bool)
	// Matches are every match a router's routes can carry. Check computes
	// them once a router, and only for routers that share with another.
	Matches func(*ir.Router) []M
	// Overlap finds a match of each list that one request can meet.
	Overlap func(as, bs []M) (M, M, bool)
	// Refuse gives, on out, the refusal of the router whose match is mine,
	// naming the other router (reason ReasonGatewayRoutesOverlap: the call
	// stays in the plane's folder, where the capability table's test reads
	// the reasons a plane gives).
	Refuse func(out *diag.List, other *ir.Router, key, where string, mine, theirs M)
}

// CheckTogether is what a plane's targets.Together returns: every router's
// diagnostics, in rs's order.
func (o *RouteOverlap[M]) CheckTogether(rs []*ir.Router) []diag.List { return o.Check(rs, false) }

// CheckOne is what a plane's targets.TogetherOne returns: CheckTogether's
// diagnostics for r, comparing r with each of the others only.
func (o *RouteOverlap[M]) CheckOne(r *ir.Router, others []*ir.Router) diag.List {
	return o.Check(append([]*ir.Router{r}, others...), true)[0]
}

// Check returns each router's diagnostics, in rs's order; with first, only
// those of rs[0] are computed (the groups and pairs that involve it), in
// the same order (a TogetherOne's CheckOne).
func (o *RouteOverlap[M]) Check(rs []*ir.Router, first bool) []diag.List {
	out := make([]diag.List, len(rs))
	memo := make([][]M, len(rs))
	done := make([]bool, len(rs))
	matches := func(i int) []M {
		if !done[i] {
			memo[i], done[i] = o.Matches(rs[i]), true
		}
		return memo[i]
	}
	keys, groups := byGateway(rs)
	for _, key := range keys {
		members := groups[key]
		if first && members[0] != 0 {
			continue // rs[0] is not on this gateway
		}
		if o.Group != nil {
			o.Group(rs, key, members, out, first)
		}
		for a := 0; a < len(members); a++ {
			if first && a > 0 {
				break // every pair with rs[0] (members[0]) is done
			}
			for b := a + 1; b < len(members); b++ {
				ia, ib := members[a], members[b]
				where, shared := o.Share(rs[ia], rs[ib])
				if !shared {
					continue
				}
				ma, mb, ok := o.Overlap(matches(ia), matches(ib))
				if !ok {
					continue
				}
				o.Refuse(&out[ia], rs[ib], key, where, ma, mb)
				o.Refuse(&out[ib], rs[ia], key, where, mb, ma)
			}
		}
	}
	return out
}

// byGateway groups routers by the gateway they attach to, keyed
// "namespace/name". Keys come sorted; each group holds the routers' indexes
// in rs, in order.
func byGateway(rs []*ir.Router) (keys []string, groups map[string][]int) {
	groups = map[string][]int{}
	for i, r := range rs {
		if ns, name, ok := r.AttachedGateway(); ok {
			k := ns + "/" + name
			if groups[k] == nil {
				keys = append(keys, k)
			}
			groups[k] = append(groups[k], i)
		}
	}
	sort.Strings(keys)
	return keys, groups
}
