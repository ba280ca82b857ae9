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

func TestSharedPrefixOrdering(t *testing.T) {
	res := simulate(t, "-workload", "shared-prefix")
	require.Len(t, res, len(arms))
	ours, rr, oracle := res["prefix+load"], res["round-robin"], res["oracle"]
	for _, r := range res {
		require.Equal(t, "shared-prefix", r.Workload)
		require.Nil(t, r.Stickiness)
		require.Positive(t, r.Throughput)
		require.GreaterOrEqual(t, r.TTFTP90, r.TTFTP50)
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

func TestBadFlags(t *testing.T) {
	var out bytes.Buffer
	require.Error(t, run([]string{"-workload", "nope"}, &out))
	require.Error(t, run([]string{"-arm", "nope"}, &out))
}
