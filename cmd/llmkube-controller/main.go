// Command llmkube-controller runs the ModelRouter controller: a
// controller-runtime manager that compiles every ModelRouter with the same
// pipeline as the llmkube-compile CLI and applies the result with server-side
// apply. It also serves the validating webhook when --webhook-port is set.
//
// Flags are pflag (the CLI's style); Go flags registered by libraries, such
// as controller-runtime's --kubeconfig and zap's logging flags, are merged in
// rather than redefined.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	// CA roots for images without a system trust store.
	_ "golang.org/x/crypto/x509roots/fallback"

	v1 "github.com/llmkube/llmkube-compile/api/v1alpha1"
	"github.com/llmkube/llmkube-compile/controller"
	"github.com/llmkube/llmkube-compile/internal/images"
	"github.com/llmkube/llmkube-compile/internal/version"
	"github.com/llmkube/llmkube-compile/platform"
	"github.com/llmkube/llmkube-compile/targets/builtin"
)

// name is the binary's name, as in --version.
const name = images.Controller

// LeaderElectionID is the Lease the replicas compete for.
const LeaderElectionID = "llmkube-controller.inference.llmkube.dev"

type options struct {
	metricsAddr, probeAddr, certDir string
	pprofAddr                       string
	leaderElect, showVersion        bool
	leaderElectionNamespace         string
	webhookPort, workers            int
	operator                        platform.Settings
	zap                             zap.Options
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	o := &options{}
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", ":8080", "metrics endpoint address; 0 disables it")
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "health (/healthz) and readiness (/readyz) probe address; 0 disables it")
	fs.StringVar(&o.pprofAddr, "pprof-bind-address", "0", "Go profiler (/debug/pprof/) address, e.g. 127.0.0.1:6060; 0 (the default) disables it. The profiles show the controller's internals: bind it to loopback or a port no one else reaches")
	fs.BoolVar(&o.leaderElect, "leader-elect", false, "use leader election (a Lease) so only one replica reconciles")
	fs.StringVar(&o.leaderElectionNamespace, "leader-election-namespace", "", "namespace of the leader-election Lease (default: the pod's namespace; required out of cluster)")
	fs.IntVar(&o.webhookPort, "webhook-port", 9443, "validating webhook port; 0 disables the webhook")
	fs.StringVar(&o.certDir, "webhook-cert-dir", "/tmp/k8s-webhook-server/serving-certs", "directory holding tls.crt and tls.key for the webhook")
	fs.IntVar(&o.workers, "max-concurrent-reconciles", controller.DefaultMaxConcurrentReconciles, "ModelRouters reconciled at once (one router is never reconciled twice at once)")
	fs.BoolVar(&o.showVersion, "version", false, "print the version and exit")
	o.operator.Bind(fs)
	// controller-runtime registers --kubeconfig on the Go flag set; zap adds
	// its logging flags there too. Merge them instead of redefining them.
	o.zap.BindFlags(flag.CommandLine)
	fs.AddGoFlagSet(flag.CommandLine)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, err)
		return 2
	}
	if o.showVersion {
		fmt.Fprintln(stdout, version.String(name))
		return 0
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "unexpected arguments %v\n", fs.Args())
		return 2
	}
	if o.workers < 1 {
		fmt.Fprintf(stderr, "--max-concurrent-reconciles %d: must be at least 1\n", o.workers)
		return 2
	}
	if err := o.operator.Validate(); err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&o.zap)))
	log := ctrl.Log.WithName("setup")
	log.Info("starting", "version", version.Get().Version, "commit", version.Get().Commit)
	if err := start(o); err != nil {
		log.Error(err, "controller stopped")
		return 1
	}
	return 0
}

func start(o *options) error {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := v1.AddToScheme(scheme); err != nil {
		return err
	}
	// --kubeconfig, $KUBECONFIG, in-cluster, then ~/.kube/config.
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	mgr, err := ctrl.NewManager(cfg, managerOptions(o, scheme))
	if err != nil {
		return err
	}
	reg := builtin.Registry()
	r := &controller.Reconciler{Registry: reg, Operator: o.operator, MaxConcurrentReconciles: o.workers}
	if err := r.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the reconciler: %w", err)
	}
	if o.webhookPort > 0 {
		if err := (&controller.Validator{Registry: reg}).SetupWebhookWithManager(mgr); err != nil {
			return fmt.Errorf("setting up the webhook: %w", err)
		}
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	ready := healthz.Ping
	if o.webhookPort > 0 {
		ready = mgr.GetWebhookServer().StartedChecker()
	}
	if err := mgr.AddReadyzCheck("readyz", ready); err != nil {
		return err
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}

// managerOptions are the manager's settings from the flags.
func managerOptions(o *options, scheme *runtime.Scheme) ctrl.Options {
	mgrOpts := ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: o.metricsAddr},
		HealthProbeBindAddress: o.probeAddr,
		PprofBindAddress:       o.pprofAddr,
		// Nothing reads managedFields from the cache (applies compare live
		// objects read uncached): dropped, they were half the informers'
		// memory at 5,000 routers (docs/measurements/2026-12-controller-at-scale-rounds.md, fix 12).
		Cache:                   cache.Options{DefaultTransform: cache.TransformStripManagedFields()},
		LeaderElection:          o.leaderElect,
		LeaderElectionID:        LeaderElectionID,
		LeaderElectionNamespace: o.leaderElectionNamespace,
		// A clean SIGTERM hands the Lease over at once.
		LeaderElectionReleaseOnCancel: true,
	}
	if o.webhookPort > 0 {
		mgrOpts.WebhookServer = webhook.NewServer(webhook.Options{Port: o.webhookPort, CertDir: o.certDir})
	}
	return mgrOpts
}
