//go:build e2ecluster

package cluster

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// The node's container runtime, for looking at running containers from the
// host as the kubelet started them (hack/cluster/cluster.sh).
const containerdSock = "unix:///run/llmkube-e2e/containerd.sock"

// process is what the kernel says of a container's main process.
type process struct {
	pid    int
	uid    string // real, effective, saved, fs
	gid    string
	capEff uint64   // effective capabilities
	noNew  bool     // no_new_privs
	mounts []string // mountinfo lines
}

// containerProcess finds the main process of a pod's container through the
// CRI (crictl inspect) and reads it from /proc.
func containerProcess(t testing.TB, pod corev1.Pod, container string) process {
	t.Helper()
	var id string
	for _, s := range pod.Status.ContainerStatuses {
		if s.Name == container {
			id = strings.TrimPrefix(s.ContainerID, "containerd://")
		}
	}
	if id == "" {
		t.Fatalf("pod %s has no running container %s", pod.Name, container)
	}
	crictl := filepath.Join(os.Getenv("CLUSTER_TOOLS"), "bin", "crictl")
	out := run(t, "", crictl, "--runtime-endpoint", containerdSock, "inspect", id)
	var info struct {
		Info struct {
			Pid int `json:"pid"`
		} `json:"info"`
	}
	if err := json.Unmarshal([]byte(out), &info); err != nil || info.Info.Pid == 0 {
		t.Fatalf("crictl inspect %s: no pid (%v)", id, err)
	}
	p := process{pid: info.Info.Pid}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		k, v, _ := strings.Cut(line, ":")
		v = strings.Join(strings.Fields(v), " ")
		switch k {
		case "Uid":
			p.uid = v
		case "Gid":
			p.gid = v
		case "CapEff":
			p.capEff, _ = strconv.ParseUint(v, 16, 64)
		case "NoNewPrivs":
			p.noNew = v == "1"
		}
	}
	mi, err := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", p.pid))
	if err != nil {
		t.Fatal(err)
	}
	p.mounts = strings.Split(strings.TrimSpace(string(mi)), "\n")
	return p
}

// memoryLimit is the memory cgroup (v1) limit of the process.
func (p process) memoryLimit(t testing.TB) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", p.pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) == 3 && strings.Contains(","+f[1]+",", ",memory,") {
			v, err := os.ReadFile(filepath.Join("/sys/fs/cgroup/memory", f[2], "memory.limit_in_bytes"))
			if err != nil {
				t.Fatal(err)
			}
			n, _ := strconv.ParseInt(strings.TrimSpace(string(v)), 10, 64)
			return n
		}
	}
	t.Fatalf("process %d has no memory cgroup", p.pid)
	return 0
}

// mount returns the options of the mount at target ("" when none).
func (p process) mount(target string) (opts string, ok bool) {
	for _, line := range p.mounts {
		f := strings.Fields(line)
		if len(f) > 5 && f[4] == target {
			opts, ok = f[5], true // the last mount at a target wins
		}
	}
	return opts, ok
}

// readOnly says whether mount options include ro.
func readOnly(opts string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == "ro" {
			return true
		}
	}
	return false
}

// checkHardened holds a running router-proxy container to what the
// compiler renders: non-root uid/gid 65532, no capabilities, no new
// privileges, a read-only root, the memory limit in its cgroup and a
// read-only config mount.
func checkHardened(t *testing.T, pod corev1.Pod, container, configDir string) {
	t.Helper()
	p := containerProcess(t, pod, container)
	if p.uid != "65532 65532 65532 65532" || p.gid != "65532 65532 65532 65532" {
		t.Errorf("%s/%s runs as uid %q gid %q, want 65532", pod.Name, container, p.uid, p.gid)
	}
	if p.capEff != 0 {
		t.Errorf("%s/%s has effective capabilities %#x, want none", pod.Name, container, p.capEff)
	}
	if !p.noNew {
		t.Errorf("%s/%s may gain privileges (no_new_privs unset)", pod.Name, container)
	}
	if opts, ok := p.mount("/"); !ok || !readOnly(opts) {
		t.Errorf("%s/%s root filesystem is not read-only (%q)", pod.Name, container, opts)
	}
	// The memory limit rendered is the one the kernel enforces.
	for _, c := range pod.Spec.Containers {
		if lim, ok := c.Resources.Limits[corev1.ResourceMemory]; ok && c.Name == container {
			if got := p.memoryLimit(t); got != lim.Value() {
				t.Errorf("%s/%s cgroup memory limit is %d, rendered %s", pod.Name, container, got, lim.String())
			}
		}
	}
	if configDir != "" {
		if opts, ok := p.mount(configDir); !ok || !readOnly(opts) {
			t.Errorf("%s/%s config mount %s missing or writable (%q)", pod.Name, container, configDir, opts)
		}
	}
}
