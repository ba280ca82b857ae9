package balance

import "math"

// blockLRU is a bounded set of prompt-block hashes with least-recently-used
// eviction. It is an open-addressing hash table (linear probing, backward
// shift deletion) of int32 node indices over a slab of 32-byte nodes
// threaded on a doubly linked recency list, so a full LRU costs 32 bytes per
// node plus 4 bytes per table slot (at most 2 slots per node): about 40-48
// bytes per remembered block, under the 64-byte budget
// (BenchmarkLRUMemory, TestLRUMemoryPerBlock). Each node carries the stamp
// of its last touch (the pod's allocation clock, see Pod.clock), so a block
// can be aged out before the count bound evicts it, and its heat: how often
// it was touched lately by placements the balancer chose (a count decaying
// with the LRU's window, in ticks), which tells a prefix that carries much
// of the pod's movable traffic from a rare one.
//
// Not safe for concurrent use; the Balancer's mutex guards it.
type blockLRU struct {
	max int
	// window is the heat's decay time constant in ticks (0: no decay).
	window float64
	nodes  []lruNode
	table  []int32 // node index + 1; 0 = empty
	mask   uint64
	head   int32 // most recently used; -1 when empty
	tail   int32 // least recently used
}

type lruNode struct {
	hash       uint64
	stamp      int64
	prev, next int32
	heat       float32 // touches, decayed to tick
	tick       uint32
}

const minTable = 64

// newBlockLRU bounds the LRU to max blocks; window is the heat's decay
// time constant in ticks.
func newBlockLRU(max int, window float64) *blockLRU {
	if max < 1 {
		max = 1
	}
	return &blockLRU{max: max, window: window, head: -1, tail: -1}
}

// decayed is a node's heat at tick.
func (l *blockLRU) decayed(n int32, tick uint32) float64 {
	nd := &l.nodes[n]
	return decayTicks(float64(nd.heat), nd.tick, tick, l.window)
}

// decayTicks is v, counted at tick from, decayed exponentially to tick to
// with time constant window (in ticks; 0: no decay). A from after to (a
// clock that wrapped, which takes 13 years) is not decayed.
func decayTicks(v float64, from, to uint32, window float64) float64 {
	if dt := to - from; dt != 0 && dt < 1<<31 && window > 0 && v != 0 {
		v *= math.Exp(-float64(dt) / window)
	}
	return v
}

// Heat is how often h was touched lately, decayed to tick (0 when h is not
// remembered). It does not touch h.
func (l *blockLRU) Heat(h uint64, tick uint32) float64 {
	n, _ := l.find(h)
	if n < 0 {
		return 0
	}
	return l.decayed(n, tick)
}

// Len is the number of remembered blocks.
func (l *blockLRU) Len() int { return len(l.nodes) }

// Mix is a final avalanche (splitmix64), so table positions use every hash bit.
func Mix(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

// find returns the node index of h and its table slot, or -1.
func (l *blockLRU) find(h uint64) (int32, uint64) {
	if len(l.table) == 0 {
		return -1, 0
	}
	i := Mix(h) & l.mask
	for {
		v := l.table[i]
		if v == 0 {
			return -1, i
		}
		if l.nodes[v-1].hash == h {
			return v - 1, i
		}
		i = (i + 1) & l.mask
	}
}

// Contains reports whether h is remembered, without touching its recency.
func (l *blockLRU) Contains(h uint64) bool {
	n, _ := l.find(h)
	return n >= 0
}

// Stamp returns the stamp of h's last touch; ok is false when h is not
// remembered. It does not touch h's recency.
func (l *blockLRU) Stamp(h uint64) (stamp int64, ok bool) {
	n, _ := l.find(h)
	if n < 0 {
		return 0, false
	}
	return l.nodes[n].stamp, true
}

// Touch remembers h as the most recently used block, evicting the least
// recently used one when full.
func (l *blockLRU) Touch(h uint64) { l.TouchAt(h, 0, 0, true) }

// TouchAt is Touch recording stamp as h's last touch and, when heat is
// true, counting the touch in h's heat at tick.
func (l *blockLRU) TouchAt(h uint64, stamp int64, tick uint32, heat bool) {
	add := 0.0
	if heat {
		add = 1
	}
	if n, _ := l.find(h); n >= 0 {
		nd := &l.nodes[n]
		nd.heat, nd.tick = float32(l.decayed(n, tick)+add), tick
		nd.stamp = stamp
		l.moveFront(n)
		return
	}
	l.insert(lruNode{hash: h, stamp: stamp, heat: float32(add), tick: tick})
}

// insert adds a node that is not remembered as the most recent, evicting the
// least recently used one when full.
func (l *blockLRU) insert(nd lruNode) {
	h := nd.hash
	if len(l.nodes) >= l.max {
		// Reuse the LRU node for h.
		n := l.tail
		l.tableDelete(l.nodes[n].hash)
		l.unlink(n)
		l.nodes[n] = nd
		l.pushFront(n)
		l.tableInsert(h, n)
		return
	}
	if len(l.nodes) == cap(l.nodes) {
		nc := max(2*cap(l.nodes), 64)
		nc = min(nc, l.max)
		grown := make([]lruNode, len(l.nodes), nc)
		copy(grown, l.nodes)
		l.nodes = grown
	}
	l.nodes = append(l.nodes, nd)
	n := int32(len(l.nodes) - 1)
	l.pushFront(n)
	if uint64(len(l.nodes))*4 > uint64(len(l.table))*3 { // load > 3/4
		l.rehash(max(2*len(l.table), minTable))
	}
	l.tableInsert(h, n)
}

func (l *blockLRU) rehash(size int) {
	l.table = make([]int32, size)
	l.mask = uint64(size - 1)
	for i := range l.nodes[:len(l.nodes)-1] { // the new node is inserted by the caller
		_, slot := l.find(l.nodes[i].hash)
		l.table[slot] = int32(i) + 1
	}
}

func (l *blockLRU) tableInsert(h uint64, n int32) {
	_, slot := l.find(h)
	l.table[slot] = n + 1
}

// tableDelete removes h with backward-shift deletion (no tombstones).
func (l *blockLRU) tableDelete(h uint64) {
	n, i := l.find(h)
	if n < 0 {
		return
	}
	j := i
	for {
		j = (j + 1) & l.mask
		v := l.table[j]
		if v == 0 {
			break
		}
		k := Mix(l.nodes[v-1].hash) & l.mask
		// Move v back to i when its home k is not cyclically within (i, j].
		if (j > i && (k <= i || k > j)) || (j < i && (k <= i && k > j)) {
			l.table[i] = v
			i = j
		}
	}
	l.table[i] = 0
}

func (l *blockLRU) unlink(n int32) {
	nd := &l.nodes[n]
	if nd.prev >= 0 {
		l.nodes[nd.prev].next = nd.next
	} else {
		l.head = nd.next
	}
	if nd.next >= 0 {
		l.nodes[nd.next].prev = nd.prev
	} else {
		l.tail = nd.prev
	}
	nd.prev, nd.next = -1, -1
}

func (l *blockLRU) pushFront(n int32) {
	nd := &l.nodes[n]
	nd.prev, nd.next = -1, l.head
	if l.head >= 0 {
		l.nodes[l.head].prev = n
	}
	l.head = n
	if l.tail < 0 {
		l.tail = n
	}
}

func (l *blockLRU) moveFront(n int32) {
	if l.head == n {
		return
	}
	l.unlink(n)
	l.pushFront(n)
}

// Max is the bound on remembered blocks.
func (l *blockLRU) Max() int { return l.max }

// Resize changes the bound; shrinking keeps the most recently used blocks
// (and their stamps and order) and forgets the rest.
func (l *blockLRU) Resize(bound int) {
	bound = max(bound, 1)
	if bound == l.max {
		return
	}
	if len(l.nodes) <= bound {
		l.max = bound
		return
	}
	keep := make([]lruNode, 0, bound)
	for n := l.head; n >= 0 && len(keep) < bound; n = l.nodes[n].next {
		keep = append(keep, l.nodes[n])
	}
	*l = blockLRU{max: bound, window: l.window, head: -1, tail: -1}
	for i := len(keep) - 1; i >= 0; i-- { // least recent first
		l.insert(keep[i])
	}
}
