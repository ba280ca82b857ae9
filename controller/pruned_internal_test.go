package controller

import "testing"

// TestPrunedCache: a fresh router skips its first prune whatever it
// desires; after a prune only the same desired set skips; forgetting (a
// failed apply, a taken name, deletion) prunes again.
func TestPrunedCache(t *testing.T) {
	var c prunedCache
	if c.upToDate("a", "x") {
		t.Error("an unknown router skipped its prune")
	}
	c.set("a", freshRouter)
	if !c.upToDate("a", "x") || !c.upToDate("a", "y") {
		t.Error("a router with nothing applied yet pruned")
	}
	// What the controller records after the first apply (skipped or not).
	c.set("a", desiredKeys(map[string]bool{"k2": true, "k1": true}))
	if !c.upToDate("a", desiredKeys(map[string]bool{"k1": true, "k2": true})) {
		t.Error("the same desired set pruned again")
	}
	if c.upToDate("a", desiredKeys(map[string]bool{"k1": true})) {
		t.Error("a smaller desired set skipped the prune")
	}
	c.forget("a")
	if c.upToDate("a", desiredKeys(map[string]bool{"k1": true, "k2": true})) {
		t.Error("a forgotten router skipped the prune")
	}
}
