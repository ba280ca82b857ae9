package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/routerproxy"
	"github.com/llmkube/llmkube-compile/routerproxy/activation"
	"github.com/llmkube/llmkube-compile/routerproxy/activation/kube"
)

// poolFlags are the ModelPool activation settings.
type poolFlags struct {
	poll, resync, lease time.Duration
}

// Defaults of the API client's throttle (--kube-api-qps, --kube-api-burst):
// controller-runtime's. client-go's own (5 and 10) made a swap queue behind
// its own member and Lease reads once a few pools were swapping or resyncing
// at once, each read then waiting its turn on the client.
const (
	DefaultKubeAPIQPS   = 20
	DefaultKubeAPIBurst = 30
)

// kubeFlags say how the proxy reaches the API server.
type kubeFlags struct {
	path  string // --kubeconfig; empty: the pod's service account
	qps   float64
	burst int
}

// validate refuses a throttle that would stall or disable the client.
func (f kubeFlags) validate() error {
	if !(f.qps > 0) { // also NaN
		return fmt.Errorf("--kube-api-qps must be greater than 0, got %v", f.qps)
	}
	if f.burst < 1 {
		return fmt.Errorf("--kube-api-burst must be at least 1, got %d", f.burst)
	}
	return nil
}

// kubeConfig is the API server the proxy talks to: --kubeconfig, else the
// pod's service account, with the flags' throttle.
func kubeConfig(f kubeFlags) (*rest.Config, error) {
	var rc *rest.Config
	var err error
	if f.path != "" {
		rc, err = clientcmd.BuildConfigFromFlags("", f.path)
	} else {
		rc, err = rest.InClusterConfig()
	}
	if err != nil {
		return nil, err
	}
	rc.QPS, rc.Burst = float32(f.qps), f.burst
	return rc, nil
}

// hasPools reports whether some backend is a ModelPool member.
func hasPools(cfg *proxyapi.Config) bool {
	for i := range cfg.Backends {
		if cfg.Backends[i].Pool != nil {
			return true
		}
	}
	return false
}

// startPools builds the ModelPool activator when a backend is a pool member.
// Pooled backends need the API server: without it the proxy refuses to start
// rather than send requests to members that are not loaded.
func startPools(ctx context.Context, cfg *proxyapi.Config, kf kubeFlags, f poolFlags, opts *routerproxy.Options, log *slog.Logger) error {
	if !hasPools(cfg) {
		return nil
	}
	rc, err := kubeConfig(kf)
	if err != nil {
		return fmt.Errorf("ModelPool activation needs the Kubernetes API (in-cluster, or --kubeconfig): %w", err)
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return err
	}
	id := os.Getenv(wellknown.PodNameEnv)
	if id == "" {
		host, _ := os.Hostname()
		id = host + "-" + strconv.Itoa(os.Getpid())
	}
	m := activation.NewMetrics(cfg.Router.Name)
	opts.Pools = activation.New(ctx, cfg, activation.Options{
		Cluster: kube.New(dyn, id, f.lease),
		Logger:  log, Metrics: m,
		Poll: f.poll, Resync: f.resync,
	})
	opts.Collectors = append(opts.Collectors, m.Collectors()...)
	log.Info("ModelPool activation on", "identity", id, "leaseDuration", f.lease.String())
	return nil
}
