package main

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// The six-seed moderate-load run of 2026-12-04 (docs/measurements/2026-12-pod-balancing-report.md): the
// router-proxy 0.11 points behind EPP on the mean, level on seed 3 and
// 0.05 points or more behind on the others.
func sixSeeds() []result {
	ours := []float64{0.9501, 0.9409, 0.9461, 0.9469, 0.9466, 0.9469}
	epp := []float64{0.9506, 0.9442, 0.9461, 0.9474, 0.9478, 0.9479}
	var rs []result
	for i := range ours {
		seed := uint64(i + 1)
		rs = append(rs,
			result{Load: "moderate", Picker: "router-proxy", Seed: seed, HitRate: ours[i]},
			result{Load: "moderate", Picker: "epp", Seed: seed, HitRate: epp[i]})
	}
	// A cell the reference did not run is left out, not compared with 0.
	return append(rs, result{Load: "moderate", Picker: "router-proxy", Seed: 7, HitRate: 0.95})
}

func TestPairedDiffs(t *testing.T) {
	ds := pairedDiffs(sixSeeds(), "epp")
	if len(ds) != 1 {
		t.Fatalf("want one comparison (router-proxy at moderate), got %+v", ds)
	}
	d := ds[0]
	if d.n != 6 {
		t.Errorf("seeds: want 6 (seed 7 has no EPP cell), got %d", d.n)
	}
	if math.Abs(d.mean-(-0.1083)) > 0.0005 {
		t.Errorf("mean difference: want -0.108 points, got %.4f", d.mean)
	}
	// Differences -0.05, -0.33, 0, -0.05, -0.12, -0.10 points: sample sd
	// 0.1165, standard error 0.0476, t(5) = 2.571.
	if math.Abs(d.half-0.1223) > 0.0005 {
		t.Errorf("95%% half-width: want 0.122 points, got %.4f", d.half)
	}
	if d.ahead != 0 || d.level != 1 || d.behind != 5 {
		t.Errorf("ahead/level/behind: want 0/1/5, got %d/%d/%d", d.ahead, d.level, d.behind)
	}
}

func TestPairedDiffsOneSeed(t *testing.T) {
	rs := []result{{Load: "moderate", Picker: "router-proxy", Seed: 1, HitRate: 0.951}, {Load: "moderate", Picker: "epp", Seed: 1, HitRate: 0.950}}
	ds := pairedDiffs(rs, "epp")
	if len(ds) != 1 || ds[0].ahead != 1 || !math.IsNaN(ds[0].half) {
		t.Fatalf("one seed: want one cell ahead and no interval, got %+v", ds)
	}
}

func TestPrintPaired(t *testing.T) {
	var b bytes.Buffer
	printPaired(&b, sixSeeds(), "epp")
	out := b.String()
	for _, want := range []string{"hit rate - epp's", "router-proxy", "-0.11 ± 0.12", "0 / 1 / 5"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	printPaired(&b, sixSeeds(), "round-robin")
	if b.Len() != 0 {
		t.Errorf("a reference that did not run prints nothing, got:\n%s", b.String())
	}
}
