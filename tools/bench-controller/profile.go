package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// profiler takes Go profiles of the controller process from its
// --pprof-bind-address (-profile): a CPU profile of the settle's first
// -profile seconds, one from the first spec change's patch, and the heap
// once every router is settled. Each is a file named after the run in
// -profile-dir (default: the run's work directory), read with
// `go tool pprof <controller binary> <file>`.
type profiler struct {
	addr string        // the controller's pprof address
	cpu  time.Duration // length of each CPU profile; 0: no profiles
	dir  string
	run  string
}

// newProfiler profiles run's controller at addr, as -profile and
// -profile-dir say (runDir when -profile-dir is not set).
func newProfiler(addr, run, runDir string) (*profiler, error) {
	dir := *flagProfileDir
	if dir == "" {
		dir = runDir
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return &profiler{addr: addr, cpu: *flagProfile, dir: dir, run: run}, nil
}

// path is where a profile of this run goes.
func (p *profiler) path(what string) string {
	return filepath.Join(p.dir, p.run+"-"+what+".pprof")
}

// startCPU starts a CPU profile of p.cpu in the background; wait blocks
// until it is written and says where (or why not). Without -profile both
// do nothing.
func (p *profiler) startCPU(ctx context.Context, what string) (wait func() string) {
	if p == nil || p.cpu <= 0 {
		return func() string { return "" }
	}
	done := make(chan string, 1)
	go func() {
		url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", p.addr, int(p.cpu.Seconds()))
		done <- p.save(ctx, url, what, p.cpu+time.Minute)
	}()
	return func() string { return <-done }
}

// heap writes a heap profile (after a GC, so it is what is live).
func (p *profiler) heap(ctx context.Context, what string) string {
	if p == nil || p.cpu <= 0 {
		return ""
	}
	return p.save(ctx, fmt.Sprintf("http://%s/debug/pprof/heap?gc=1", p.addr), what, time.Minute)
}

func (p *profiler) save(ctx context.Context, url, what string, timeout time.Duration) string {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Sprintf("%s profile: %v", what, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Sprintf("%s profile: %s", what, resp.Status)
	}
	path := p.path(what)
	f, err := os.Create(path)
	if err != nil {
		return fmt.Sprintf("%s profile: %v", what, err)
	}
	_, err = io.Copy(f, resp.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Sprintf("%s profile: %v", what, err)
	}
	return what + " profile " + path
}
