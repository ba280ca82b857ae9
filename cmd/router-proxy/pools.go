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
	"github.com/llmkube/llmkube-compile/proxy"
	"github.com/llmkube/llmkube-compile/proxy/activation"
	"github.com/llmkube/llmkube-compile/proxy/activation/kube"
	"github.com/llmkube/llmkube-compile/proxyapi"
)

// poolFlags are the ModelPool activation settings.
type poolFlags struct {
	poll, resync, lease time.Duration
}

// kubeConfig is the API server the proxy talks to: --kubeconfig, else the
// pod's service account.
func kubeConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		return clientcmd.BuildConfigFromFlags("", kubeconfig)
	}
	return rest.InClusterConfig()
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
func startPools(ctx context.Context, cfg *proxyapi.Config, kubeconfig string, f poolFlags, opts *proxy.Options, log *slog.Logger) error {
	if !hasPools(cfg) {
		return nil
	}
	rc, err := kubeConfig(kubeconfig)
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
