package main

import (
	"fmt"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/llmkube/llmkube-compile/test/testenv"
)

// cluster is kube-apiserver and etcd from the envtest binaries with the CRDs
// the tests install (test/testenv: config/crd, ../shared/crds and the
// pinned modules' CRDs). It is started here rather than with testenv.New
// for one flag: envtest's Service range (10.0.0.0/24) has 254 addresses,
// and every Proxy router takes two.
type cluster struct {
	env  *envtest.Environment
	cfg  *rest.Config
	crds int
}

func startCluster() (*cluster, error) {
	assets, err := testenv.AssetsDir()
	if err != nil {
		return nil, err
	}
	root, err := testenv.RepoRoot()
	if err != nil {
		return nil, err
	}
	crds, err := testenv.LoadCRDs(root)
	if err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory:    assets,
		CRDs:                     crds,
		ErrorIfCRDPathMissing:    true,
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  time.Minute,
		CRDInstallOptions:        envtest.CRDInstallOptions{MaxTime: 2 * time.Minute},
	}
	env.ControlPlane.GetAPIServer().Configure().Set("service-cluster-ip-range", "10.96.0.0/16")
	cfg, err := env.Start()
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("starting kube-apiserver and etcd from %s: %w", assets, err)
	}
	return &cluster{env: env, cfg: cfg, crds: len(crds)}, nil
}

func (c *cluster) stop() { _ = c.env.Stop() }

// writeKubeconfig writes an admin kubeconfig for the controller process.
func (c *cluster) writeKubeconfig(path string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["bench"] = &clientcmdapi.Cluster{Server: c.cfg.Host, CertificateAuthorityData: c.cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: c.cfg.CertData, ClientKeyData: c.cfg.KeyData, Token: c.cfg.BearerToken}
	kc.Contexts["bench"] = &clientcmdapi.Context{Cluster: "bench", AuthInfo: "admin"}
	kc.CurrentContext = "bench"
	return clientcmd.WriteToFile(*kc, path)
}
