package authtest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// secretGen numbers the timestamped directories WriteSecret creates.
var secretGen atomic.Int64

// WriteSecret writes data to dir as the kubelet writes a mounted Secret
// (k8s.io/kubernetes/pkg/volume/util AtomicWriter): the files go into a new
// hidden directory ..<n>, a ..data_tmp symlink to it is renamed over ..data
// (the atomic swap), each data key is a symlink ..data/<key> created once,
// a key no longer in data loses its symlink, and the old directory is
// removed. A reader sees the old set or the new one, never a mix. Called
// again on the same dir it is a rotation.
func WriteSecret(t testing.TB, dir string, data map[string]string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	old, _ := os.Readlink(filepath.Join(dir, "..data"))
	ts := "..2026_12_07_00_00_00." + strconv.FormatInt(secretGen.Add(1), 10)
	require.NoError(t, os.Mkdir(filepath.Join(dir, ts), 0o755))
	for k, v := range data {
		require.NoError(t, os.WriteFile(filepath.Join(dir, ts, k), []byte(v), 0o644))
	}
	tmp := filepath.Join(dir, "..data_tmp")
	_ = os.Remove(tmp)
	require.NoError(t, os.Symlink(ts, tmp))
	require.NoError(t, os.Rename(tmp, filepath.Join(dir, "..data")))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "..") {
			continue
		}
		if _, keep := data[e.Name()]; !keep {
			require.NoError(t, os.Remove(filepath.Join(dir, e.Name())))
		}
	}
	for k := range data {
		link := filepath.Join(dir, k)
		if _, err := os.Lstat(link); os.IsNotExist(err) {
			require.NoError(t, os.Symlink(filepath.Join("..data", k), link))
		}
	}
	if old != "" {
		require.NoError(t, os.RemoveAll(filepath.Join(dir, old)))
	}
}
