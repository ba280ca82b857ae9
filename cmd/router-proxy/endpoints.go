package main

import (
	"context"
	"log/slog"
	"time"

	"k8s.io/client-go/dynamic"

	"github.com/llmkube/llmkube-compile/routerproxy"
	"github.com/llmkube/llmkube-compile/routerproxy/endpoints"
)

// startEndpoints runs the EndpointSlice informers and the engine metrics
// scraper when some backend uses endpoint resolution. Without API access the
// backends keep dispatching to their Service URL (logged as an error).
func startEndpoints(ctx context.Context, srv *routerproxy.Server, kf kubeFlags, interval time.Duration, log *slog.Logger) {
	bs := srv.EndpointBackends()
	if len(bs) == 0 {
		return
	}
	cfg, err := kubeConfig(kf)
	if err != nil {
		log.Error("endpoint resolution needs the Kubernetes API; dispatching to the Services instead", "error", err)
		return
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		log.Error("endpoint resolution: kubernetes client", "error", err)
		return
	}
	go func() {
		if err := endpoints.Watch(ctx, dyn, endpoints.Targets(bs), log); err != nil {
			log.Error("endpoint resolution: watch", "error", err)
			return
		}
		log.Info("endpoint resolution synced", "backends", len(bs))
	}()
	sc := &endpoints.Scraper{Interval: interval, Log: log, Sinks: endpoints.Sinks(bs)}
	go sc.Run(ctx)
}
