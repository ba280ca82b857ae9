package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// simulate runs a small simulation through the command line and returns
// the JSON lines by arm.
func simulate(t *testing.T, args ...string) map[string]result {
	t.Helper()
	var out bytes.Buffer
	require.NoError(t, run(append([]string{"-json", "-scale", "0.2"}, args...), &out))
	res := map[string]result{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var r result
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		res[r.Arm] = r
	}
	return res
}

// simulateArms runs every arm on workload and checks each reports it.
func simulateArms(t *testing.T, workload string) map[string]result {
	t.Helper()
	res := simulate(t, "-workload", workload)
	require.Len(t, res, len(arms))
	for _, r := range res {
		require.Equal(t, workload, r.Workload)
	}
	return res
}

func TestSharedPrefixOrdering(t *testing.T) {
	res := simulateArms(t, "shared-prefix")
	ours, rr, oracle := res["prefix+load"], res["round-robin"], res["oracle"]
	for _, r := range res {
		require.Nil(t, r.Stickiness)
		require.Positive(t, r.Throughput)
		require.GreaterOrEqual(t, r.TTFTP90, r.TTFTP50)
		require.GreaterOrEqual(t, r.TTFTP99, r.TTFTP90)
	}
	require.Greater(t, ours.HitRate, 2*rr.HitRate, "prefix affinity beats round-robin by far")
	require.GreaterOrEqual(t, ours.HitRate, 0.9*oracle.HitRate)
	require.Greater(t, ours.HitRate, res["least-loaded"].HitRate)
	require.Greater(t, ours.Throughput, rr.Throughput)
}

func TestHotTenantSheds(t *testing.T) {
	res := simulate(t, "-workload", "hot-tenant")
	ours, only := res["prefix+load"], res["prefix-only"]
	require.Less(t, ours.MaxQueue, only.MaxQueue, "load keeps the hot tenant's pod from piling up")
	require.Greater(t, ours.Throughput, only.Throughput)
	require.Greater(t, ours.HitRate, res["round-robin"].HitRate)
}

func TestSessionsStick(t *testing.T) {
	res := simulate(t, "-workload", "sessions")
	ours := res["prefix+load"]
	require.NotNil(t, ours.Stickiness)
	require.GreaterOrEqual(t, *ours.Stickiness, 0.95)
	require.Less(t, *res["round-robin"].Stickiness, 0.5)
	require.Greater(t, ours.HitRate, res["round-robin"].HitRate)
}

// The documents workload (tools/bench-routing's, in simulated time): the
// balancer keeps the hit rate of always following the prefix while its
// busiest pod stays near the mean, where prefix-only piles the top document
// on one pod; the warm-up is left out of the report.
func TestDocumentsWorkload(t *testing.T) {
	res := simulateArms(t, "documents")
	ours, only, rr := res["prefix+load"], res["prefix-only"], res["round-robin"]
	for _, r := range res {
		require.NotNil(t, r.Stickiness)
		require.LessOrEqual(t, r.ColdFirst, r.Cold)
		// 14 req/s over 36 s measured (scale 0.2), give or take the
		// closed loop's pace.
		require.InDelta(t, 14*36, r.Requests, 14*36*0.25)
	}
	require.Greater(t, ours.HitRate, 0.9)
	require.InDelta(t, only.HitRate, ours.HitRate, 0.01, "within a point of always following the prefix")
	require.Greater(t, ours.HitRate, rr.HitRate+0.2)
	require.Less(t, ours.Busiest, 1.3)
	require.Greater(t, only.Busiest, 1.5, "prefix-only concentrates the top document")
	require.GreaterOrEqual(t, *ours.Stickiness, 0.95)

	var all, warmed bytes.Buffer
	require.NoError(t, run([]string{"-json", "-scale", "0.2", "-workload", "documents", "-arm", "prefix+load", "-warmup", "0s"}, &all))
	require.NoError(t, run([]string{"-json", "-scale", "0.2", "-workload", "documents", "-arm", "prefix+load"}, &warmed))
	var a, w result
	require.NoError(t, json.Unmarshal(all.Bytes(), &a))
	require.NoError(t, json.Unmarshal(warmed.Bytes(), &w))
	require.Greater(t, a.ColdFirst, w.ColdFirst, "from a cold start every document is new")
	require.Equal(t, ours, w, "deterministic for a seed")
}

func TestBadFlags(t *testing.T) {
	var out bytes.Buffer
	require.Error(t, run([]string{"-workload", "nope"}, &out))
	require.Error(t, run([]string{"-arm", "nope"}, &out))
	require.Error(t, run([]string{"-rate", "0"}, &out))
	require.Error(t, run([]string{"-warmup", "-1s"}, &out))
}
