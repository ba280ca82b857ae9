package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

const (
	benchNS   = "bench"
	poolName  = "vllm"
	podPort   = 8000
	modelName = "bench-model"
	// advertiseIP is the API server's advertised address (on loopback in
	// the benchmark's network namespace).
	advertiseIP = "198.51.100.1"
)

// cluster is a real kube-apiserver + etcd (envtest binaries) holding the
// fleet: Ready Pods with TEST-NET-2 IPs, their Service and EndpointSlice
// (what the router-proxy watches) and an InferencePool (what EPP watches).
type cluster struct {
	env        *envtest.Environment
	cfg        *rest.Config
	kubeconfig string
}

func startCluster(crdDir, workDir string) (*cluster, error) {
	env := &envtest.Environment{CRDDirectoryPaths: []string{crdDir}, ErrorIfCRDPathMissing: true}
	// The namespace has no default route to take an address from.
	env.ControlPlane.GetAPIServer().Configure().Set("advertise-address", advertiseIP)
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("envtest: %w", err)
	}
	c := &cluster{env: env, cfg: cfg, kubeconfig: filepath.Join(workDir, "kubeconfig")}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["bench"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["bench"] = &clientcmdapi.Context{Cluster: "bench", AuthInfo: "admin", Namespace: benchNS}
	kc.CurrentContext = "bench"
	if err := clientcmd.WriteToFile(*kc, c.kubeconfig); err != nil {
		_ = env.Stop()
		return nil, err
	}
	return c, nil
}

func (c *cluster) stop() { _ = c.env.Stop() }

var inferencePools = schema.GroupVersionResource{Group: "inference.networking.k8s.io", Version: "v1", Resource: "inferencepools"}

// createFleet creates the namespace, one Ready Pod per address, the
// Service and EndpointSlice, and the InferencePool.
func (c *cluster) createFleet(ctx context.Context, ips []string, names []string) error {
	cs, err := kubernetes.NewForConfig(c.cfg)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(c.cfg)
	if err != nil {
		return err
	}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: benchNS}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	labels := map[string]string{"app": poolName}
	for i, ip := range ips {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: names[i], Namespace: benchNS, Labels: labels},
			Spec: corev1.PodSpec{NodeName: "node-0", Containers: []corev1.Container{{Name: "vllm", Image: "vllm/vllm-openai:v0.11.0",
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: podPort}}}}},
		}
		created, err := cs.CoreV1().Pods(benchNS).Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		now := metav1.NewTime(time.Now())
		created.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}}, HostIP: "198.51.100.1",
			StartTime: &now,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "vllm", Ready: true, Image: "vllm/vllm-openai:v0.11.0",
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}}}
		if _, err := cs.CoreV1().Pods(benchNS).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: poolName, Namespace: benchNS},
		Spec:       corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Name: "http", Port: podPort, TargetPort: intstr.FromString("http")}}},
	}
	if _, err := cs.CoreV1().Services(benchNS).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return err
	}
	ready := true
	port, portName, proto := int32(podPort), "http", corev1.ProtocolTCP
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: poolName + "-1", Namespace: benchNS, Labels: map[string]string{discoveryv1.LabelServiceName: poolName}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: &portName, Port: &port, Protocol: &proto}},
	}
	for i, ip := range ips {
		slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: &ready},
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: benchNS, Name: names[i]}})
	}
	if _, err := cs.DiscoveryV1().EndpointSlices(benchNS).Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		return err
	}
	pool := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "inference.networking.k8s.io/v1", "kind": "InferencePool",
		"metadata": map[string]any{"name": poolName, "namespace": benchNS},
		"spec": map[string]any{
			"selector":          map[string]any{"matchLabels": map[string]any{"app": poolName}},
			"targetPorts":       []any{map[string]any{"number": int64(podPort)}},
			"endpointPickerRef": map[string]any{"name": "epp", "port": map[string]any{"number": int64(9002)}},
		},
	}}
	_, err = dyn.Resource(inferencePools).Namespace(benchNS).Create(ctx, pool, metav1.CreateOptions{})
	return err
}

func writeFile(path string, data []byte) error { return os.WriteFile(path, data, 0o600) }
