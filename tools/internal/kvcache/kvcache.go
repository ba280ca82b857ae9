// Package kvcache is a model engine's paged KV cache with prefix caching,
// as vLLM keeps it and the simulators model it: pages named by a chained
// hash of their tokens; a page a sequence uses is pinned; an unpinned page
// stays cached on an LRU list and is evicted from its cold end when a new
// page needs room. tools/routersim's pods and tools/bench-routing's engines
// both model their cache with it.
package kvcache

// Page is one cached page.
type Page struct {
	id         uint64
	ref        int   // sequences using it
	prev, next *Page // the LRU of unpinned pages; head = most recent
}

// Cache is one engine's cache. It is not safe for concurrent use.
type Cache struct {
	capacity   int // pages
	pages      map[uint64]*Page
	head, tail *Page
	pinned     int
}

// New is an empty cache of capacity pages.
func New(capacity int) *Cache {
	return &Cache{capacity: capacity, pages: map[uint64]*Page{}}
}

// Capacity is the cache's size in pages.
func (c *Cache) Capacity() int { return c.capacity }

// Pinned is how many pages sequences use.
func (c *Cache) Pinned() int { return c.pinned }

// Usage is the pinned share of the capacity (vllm:kv_cache_usage_perc).
func (c *Cache) Usage() float64 { return float64(c.pinned) / float64(c.capacity) }

// CachedPrefix is how many of the leading pages are in the cache.
func (c *Cache) CachedPrefix(ids []uint64) int {
	for i, id := range ids {
		if _, ok := c.pages[id]; !ok {
			return i
		}
	}
	return len(ids)
}

// Fits reports whether every page of ids can be pinned at once: the pages
// to allocate and the cached pages to take off the LRU, beside those
// already pinned, fit the capacity.
func (c *Cache) Fits(ids []uint64) bool {
	need, reuse := 0, 0
	for _, id := range ids {
		if pg, ok := c.pages[id]; !ok {
			need++
		} else if pg.ref == 0 {
			reuse++
		}
	}
	return c.pinned+reuse+need <= c.capacity
}

// PinAll pins every page of ids for one sequence and returns them: the
// cached ones first, so that allocating cannot evict them, then new ones,
// each evicting the least recently used unpinned page while the cache is
// full.
func (c *Cache) PinAll(ids []uint64) []*Page {
	var out []*Page
	for _, id := range ids {
		if pg, ok := c.pages[id]; ok {
			out = append(out, c.pin(pg))
		}
	}
	for _, id := range ids {
		if _, ok := c.pages[id]; ok {
			continue
		}
		for len(c.pages) >= c.capacity && c.tail != nil {
			ev := c.tail
			c.remove(ev)
			delete(c.pages, ev.id)
		}
		pg := &Page{id: id}
		c.pages[id] = pg
		out = append(out, c.pin(pg))
	}
	return out
}

// Unpin releases a sequence's pages: one no other sequence uses becomes
// the most recent on the LRU.
func (c *Cache) Unpin(pages []*Page) {
	for _, pg := range pages {
		pg.ref--
		if pg.ref == 0 {
			c.pinned--
			c.push(pg)
		}
	}
}

func (c *Cache) pin(pg *Page) *Page {
	if pg.ref == 0 {
		if pg.prev != nil || pg.next != nil || c.head == pg {
			c.remove(pg)
		}
		c.pinned++
	}
	pg.ref++
	return pg
}

func (c *Cache) remove(pg *Page) {
	if pg.prev != nil {
		pg.prev.next = pg.next
	} else {
		c.head = pg.next
	}
	if pg.next != nil {
		pg.next.prev = pg.prev
	} else {
		c.tail = pg.prev
	}
	pg.prev, pg.next = nil, nil
}

func (c *Cache) push(pg *Page) {
	pg.prev, pg.next = nil, c.head
	if c.head != nil {
		c.head.prev = pg
	}
	c.head = pg
	if c.tail == nil {
		c.tail = pg
	}
}
