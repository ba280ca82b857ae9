// Command controller runs the ModelRouter controller: a controller-runtime
// manager that compiles every ModelRouter with the same pipeline as the
// llmkube-compile CLI and applies the result with server-side apply.
package main

import (
	"flag"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/controller"
	"github.com/llmkube/llmkube-compile/targets/builtin"
)

func main() {
	var (
		kubeconfig, metricsAddr, probeAddr, proxyImage, certDir string
		leaderElect                                             bool
		webhookPort                                             int
	)
	flag.StringVar(&kubeconfig, "kubeconfig", "", "path to a kubeconfig; in-cluster config when empty")
	flag.StringVar(&metricsAddr, "metrics-bind-address", ":8080", "metrics endpoint address; 0 disables it")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "health and readiness probe address")
	flag.BoolVar(&leaderElect, "leader-elect", false, "use leader election so only one replica reconciles")
	flag.StringVar(&proxyImage, "proxy-image", "", "router-proxy image for routers without spec.proxy.image (default: the compiler's)")
	flag.IntVar(&webhookPort, "webhook-port", 9443, "validating webhook port; 0 disables the webhook")
	flag.StringVar(&certDir, "webhook-cert-dir", "/tmp/k8s-webhook-server/serving-certs", "directory holding tls.crt and tls.key for the webhook")
	opts := zap.Options{}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	log := ctrl.Log.WithName("setup")

	if err := run(kubeconfig, metricsAddr, probeAddr, proxyImage, certDir, leaderElect, webhookPort); err != nil {
		log.Error(err, "controller stopped")
		os.Exit(1)
	}
}

func run(kubeconfig, metricsAddr, probeAddr, proxyImage, certDir string, leaderElect bool, webhookPort int) error {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := v1.AddToScheme(scheme); err != nil {
		return err
	}
	var cfgErr error
	cfg, cfgErr := ctrl.GetConfig()
	if kubeconfig != "" {
		cfg, cfgErr = clientcmd.BuildConfigFromFlags("", kubeconfig)
	}
	if cfgErr != nil {
		return fmt.Errorf("kubeconfig: %w", cfgErr)
	}
	mgrOpts := ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress: probeAddr,
		LeaderElection:         leaderElect,
		LeaderElectionID:       "llmkube-compile-controller.inference.llmkube.dev",
	}
	if webhookPort > 0 {
		mgrOpts.WebhookServer = webhook.NewServer(webhook.Options{Port: webhookPort, CertDir: certDir})
	}
	mgr, err := ctrl.NewManager(cfg, mgrOpts)
	if err != nil {
		return err
	}
	reg := builtin.Registry()
	r := &controller.Reconciler{Registry: reg, ProxyImage: proxyImage}
	if err := r.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the reconciler: %w", err)
	}
	if webhookPort > 0 {
		if err := (&controller.Validator{Registry: reg}).SetupWebhookWithManager(mgr); err != nil {
			return fmt.Errorf("setting up the webhook: %w", err)
		}
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	ready := healthz.Ping
	if webhookPort > 0 {
		ready = mgr.GetWebhookServer().StartedChecker()
	}
	if err := mgr.AddReadyzCheck("readyz", ready); err != nil {
		return err
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}
