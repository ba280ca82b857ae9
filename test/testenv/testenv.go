// Package testenv starts a real kube-apiserver and etcd (controller-runtime's
// envtest) with every CRD the compiler targets installed, so tests can prove
// that generated objects are accepted by a real API server: structural
// schemas, CEL (x-kubernetes-validations) rules and strict field validation
// (unknown or duplicate fields are errors, not warnings).
//
// It is meant for tests only. The binaries come from KUBEBUILDER_ASSETS, which
// `make test` sets after `make envtest` (hack/install-envtest.sh) has built
// kube-apiserver from k8s.io/kubernetes and installed etcd. If the variable is
// unset or the binaries are missing, Start and StartMain fail (they never skip).
//
// CRDs installed (see LoadCRDs):
//   - every CustomResourceDefinition in *.yaml/*.yml under config/crd of this
//     repository (our own generated ModelRouter CRD), and
//   - every CustomResourceDefinition in *.yaml/*.yml under ../shared/crds
//     (relative to the repository root; override with LLMKUBE_SHARED_DIR),
//     except agentgateway/release-v1.4.1 (an older copy of the top-level
//     agentgateway CRDs) and any CRD whose name config/crd already defines
//     (so our modelrouters.inference.llmkube.dev replaces the upstream one in
//     ../shared/crds/llmkube; without a config/crd copy the shared one is used).
//
// Start one API server per test package with TestMain:
//
//	var env *testenv.Env
//
//	func TestMain(m *testing.M) { testenv.RunMain(m, &env) }
//
//	func TestRendered(t *testing.T) {
//		ns := env.NewNamespace(t)                  // unique, per test
//		errs := env.ApplyYAMLInNamespace(ctx, ns, rendered) // multi-doc YAML
//		require.Empty(t, errs)
//	}
//
// Once StartMain has run, Start(t) returns that shared Env; without a TestMain,
// Start(t) starts a dedicated API server that is stopped when t finishes.
package testenv

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"
)

// FieldManager is the server-side apply field manager used by ApplyStrict.
const FieldManager = "llmkube-compile-test"

// ModulePath is the module whose go.mod marks the repository root.
const ModulePath = "github.com/llmkube/llmkube-compile"

// excludedSharedDirs are directories under shared/crds whose CRDs are not
// installed (paths relative to shared/crds, slash-separated).
var excludedSharedDirs = []string{
	"agentgateway/release-v1.4.1", // older duplicate of the top-level agentgateway CRDs
}

// Env is a running kube-apiserver + etcd with the CRDs installed.
type Env struct {
	// Config reaches the API server as an admin.
	Config *rest.Config
	// Client is a controller-runtime client (client-go scheme: core types are
	// typed; use *unstructured.Unstructured for CRD-backed objects).
	Client client.Client
	// Dynamic is a dynamic client for the same server.
	Dynamic dynamic.Interface
	// RepoRoot is the directory holding this module's go.mod.
	RepoRoot string
	// CRDs are the CustomResourceDefinitions that were installed.
	CRDs []*apiextensionsv1.CustomResourceDefinition
	// StartDuration is how long starting etcd + kube-apiserver and installing
	// the CRDs took; CRDInstallDuration is the CRD part of it.
	StartDuration      time.Duration
	CRDInstallDuration time.Duration

	env *envtest.Environment

	nsMu    sync.Mutex
	nsKnown map[string]bool
}

var (
	sharedMu  sync.Mutex
	sharedEnv *Env
	logOnce   sync.Once
)

// Start returns an Env for t. If StartMain has started a package-wide Env it
// is returned; otherwise a new API server is started and stopped when t and
// its subtests finish. Any problem fails t (it never skips).
func Start(t testing.TB) *Env {
	t.Helper()
	sharedMu.Lock()
	s := sharedEnv
	sharedMu.Unlock()
	if s != nil {
		return s
	}
	e, err := New()
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	t.Cleanup(func() {
		if err := e.Stop(); err != nil {
			t.Errorf("testenv: stopping the API server: %v", err)
		}
	})
	return e
}

// StartMain starts the package-wide Env for TestMain and returns it with the
// function that stops it. On failure it prints the reason and exits with
// status 1, so `go test` reports the package as FAIL.
func StartMain() (*Env, func()) { return StartMainWithOptions(Options{}) }

// StartOwn starts an API server of its own for one test, stopped when the
// test ends; a start failure fails the test.
func StartOwn(t testing.TB, o Options) *Env {
	t.Helper()
	e, err := NewWithOptions(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Stop() })
	return e
}

// RunMain is a whole TestMain: it starts the package's one API server into
// *env, runs the tests, stops the server and exits with the tests' status.
func RunMain(m *testing.M, env **Env) {
	e, stop := StartMain()
	*env = e
	code := m.Run()
	stop()
	os.Exit(code)
}

// CallTimeout bounds a test's calls to the API server (Context): generous,
// only there so that a hung call fails the test instead of the whole run.
const CallTimeout = 5 * time.Minute

// Context is the context of a test's calls to the API server: cancelled
// when t and its subtests finish, or after CallTimeout.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), CallTimeout)
	t.Cleanup(cancel)
	return ctx
}

// Options tune NewWithOptions. The zero value is what New does.
type Options struct {
	// ExcludeCRD, when set, leaves out every CRD for which it returns true
	// (for example to start an API server on which a data plane's CRDs are
	// absent; InstallCRDs installs them later).
	ExcludeCRD func(*apiextensionsv1.CustomResourceDefinition) bool
	// Webhook, when set, installs these webhook configurations and prepares
	// a local serving certificate (see envtest.WebhookInstallOptions); after
	// start it carries LocalServingHost, LocalServingPort and
	// LocalServingCertDir for the webhook server under test.
	Webhook *envtest.WebhookInstallOptions
	// SharedRelease, when set, installs the CRDs of one shared directory
	// from another release's copy: each key is a directory under
	// shared/crds (say "agentgateway"), its value the directory whose CRDs
	// replace it ("agentgateway/release-v1.4.1"), which may be one the
	// default leaves out. A test starts such an API server to prove which
	// output an older upstream release accepts.
	SharedRelease map[string]string
}

// New starts etcd and kube-apiserver from KUBEBUILDER_ASSETS, installs the
// CRDs and waits until they are served. Call Stop when done.
func New() (*Env, error) { return NewWithOptions(Options{}) }

// StartMainWithOptions is StartMain with Options.
func StartMainWithOptions(o Options) (*Env, func()) {
	e, err := NewWithOptions(o)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testenv: %v\n", err)
		os.Exit(1)
	}
	sharedMu.Lock()
	sharedEnv = e
	sharedMu.Unlock()
	return e, func() {
		sharedMu.Lock()
		if sharedEnv == e {
			sharedEnv = nil
		}
		sharedMu.Unlock()
		if err := e.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "testenv: stopping the API server: %v\n", err)
		}
	}
}

// InstallCRDs installs the CRDs (from the same files New reads) for which
// pick returns true and that are not installed yet, and waits until they are
// served. It is how a test installs CRDs left out with Options.ExcludeCRD.
func (e *Env) InstallCRDs(pick func(*apiextensionsv1.CustomResourceDefinition) bool) error {
	files, err := loadCRDFiles(e.RepoRoot)
	if err != nil {
		return err
	}
	installed := map[string]bool{}
	for _, c := range e.CRDs {
		installed[c.Name] = true
	}
	var todo []crdFile
	for _, f := range files {
		if pick(f.crd) && !installed[f.crd.Name] {
			todo = append(todo, f)
		}
	}
	if err := installCRDs(e.Config, e.Client, todo, 2*time.Minute); err != nil {
		return err
	}
	for _, f := range todo {
		e.CRDs = append(e.CRDs, f.crd)
	}
	return nil
}

// NewWithOptions is New with Options.
func NewWithOptions(o Options) (*Env, error) {
	logOnce.Do(func() {
		// envtest logs through controller-runtime's logger; without one it
		// prints a "SetLogger was never called" warning with a stack trace.
		logf.SetLogger(logr.Discard())
	})

	assets, err := AssetsDir()
	if err != nil {
		return nil, err
	}
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	files, err := loadCRDFiles(root)
	if err != nil {
		return nil, err
	}
	if len(o.SharedRelease) > 0 {
		if files, err = swapSharedRelease(root, files, o.SharedRelease); err != nil {
			return nil, err
		}
	}
	if o.ExcludeCRD != nil {
		kept := files[:0:0]
		for _, f := range files {
			if !o.ExcludeCRD(f.crd) {
				kept = append(kept, f)
			}
		}
		files = kept
	}
	crds := make([]*apiextensionsv1.CustomResourceDefinition, len(files))
	for i, f := range files {
		crds[i] = f.crd
	}

	timeout := 2 * time.Minute // 2 cores, several test binaries at once
	// The CRDs are created below, one by one, so that an invalid one is
	// reported with the file it came from.
	te := &envtest.Environment{
		BinaryAssetsDirectory:    assets,
		ControlPlaneStartTimeout: timeout,
		ControlPlaneStopTimeout:  time.Minute,
	}
	if o.Webhook != nil {
		te.WebhookInstallOptions = *o.Webhook
	}
	if os.Getenv("KUBEBUILDER_CONTROLPLANE_START_TIMEOUT") != "" {
		te.ControlPlaneStartTimeout = 0 // let envtest read the variable
	}

	began := time.Now()
	cfg, err := te.Start()
	if err != nil {
		_ = te.Stop()
		return nil, fmt.Errorf("starting kube-apiserver and etcd from %s: %w "+
			"(set KUBEBUILDER_ATTACH_CONTROL_PLANE_OUTPUT=true to see their output; "+
			"run `make envtest` to rebuild the binaries)", assets, err)
	}

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		_ = te.Stop()
		return nil, err
	}
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		_ = te.Stop()
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		_ = te.Stop()
		return nil, fmt.Errorf("creating a client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		_ = te.Stop()
		return nil, fmt.Errorf("creating a dynamic client: %w", err)
	}
	crdBegan := time.Now()
	if err := installCRDs(cfg, c, files, timeout); err != nil {
		_ = te.Stop()
		return nil, err
	}
	elapsed, crdElapsed := time.Since(began), time.Since(crdBegan)
	if o.Webhook != nil {
		*o.Webhook = te.WebhookInstallOptions
	}
	return &Env{
		Config:             cfg,
		Client:             c,
		Dynamic:            dyn,
		RepoRoot:           root,
		CRDs:               crds,
		StartDuration:      elapsed,
		CRDInstallDuration: crdElapsed,
		env:                te,
		nsKnown:            map[string]bool{},
	}, nil
}

// Stop stops kube-apiserver and etcd and removes their temporary files.
func (e *Env) Stop() error {
	if e == nil || e.env == nil {
		return nil
	}
	err := e.env.Stop()
	e.env = nil
	return err
}

// AssetsDir returns KUBEBUILDER_ASSETS after checking that it holds
// executable kube-apiserver and etcd binaries.
func AssetsDir() (string, error) {
	const hint = "run `make envtest` (hack/install-envtest.sh) and set " +
		"KUBEBUILDER_ASSETS to its directory, or run the tests with `make test`"
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		return "", fmt.Errorf("KUBEBUILDER_ASSETS is not set: these tests need a real kube-apiserver and etcd; %s", hint)
	}
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		p := filepath.Join(dir, bin)
		st, err := os.Stat(p) // follows the etcd symlink
		if err != nil {
			return "", fmt.Errorf("KUBEBUILDER_ASSETS=%s has no usable %s (%v); %s", dir, bin, err, hint)
		}
		if st.IsDir() || st.Mode().Perm()&0o111 == 0 {
			return "", fmt.Errorf("KUBEBUILDER_ASSETS=%s: %s is not an executable file; %s", dir, p, hint)
		}
	}
	return dir, nil
}

// RepoRoot walks up from the working directory to the go.mod of this module.
func RepoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	moduleLine := regexp.MustCompile(`(?m)^module\s+` + regexp.QuoteMeta(ModulePath) + `\s*$`)
	for dir := wd; ; dir = filepath.Dir(dir) {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && moduleLine.Match(data) {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("no go.mod for module %s in %s or any parent", ModulePath, wd)
		}
	}
}

// SharedCRDDir is where the upstream CRDs live: $LLMKUBE_SHARED_DIR/crds, or
// ../shared/crds next to the repository root.
func SharedCRDDir(root string) string {
	if d := os.Getenv("LLMKUBE_SHARED_DIR"); d != "" {
		return filepath.Join(d, "crds")
	}
	return filepath.Join(root, "..", "shared", "crds")
}

// installCRDs creates every CRD (all errors are reported, each with its
// file) and waits until the API server serves them.
func installCRDs(cfg *rest.Config, c client.Client, files []crdFile, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var errs []error
	crds := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(files))
	for _, f := range files {
		crd := f.crd.DeepCopy()
		if err := c.Create(ctx, crd); err != nil {
			errs = append(errs, fmt.Errorf("installing CRD %s from %s: %w", f.crd.Name, f.file, err))
			continue
		}
		crds = append(crds, f.crd)
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	err := envtest.WaitForCRDs(cfg, crds, envtest.CRDInstallOptions{
		MaxTime:      timeout,
		PollInterval: 100 * time.Millisecond,
	})
	if err != nil {
		return fmt.Errorf("waiting for the CRDs to be served: %w", err)
	}
	return nil
}

// LoadCRDs reads the CRDs to install (see the package comment): the ones in
// root/config/crd (if any) and the shared upstream ones they do not replace.
// Duplicate names are an error.
func LoadCRDs(root string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	files, err := loadCRDFiles(root)
	if err != nil {
		return nil, err
	}
	out := make([]*apiextensionsv1.CustomResourceDefinition, len(files))
	for i, f := range files {
		out[i] = f.crd
	}
	return out, nil
}

func loadCRDFiles(root string) ([]crdFile, error) {
	var out []crdFile
	seen := map[string]string{} // CRD name -> file

	ownDir := filepath.Join(root, "config", "crd")
	if _, err := os.Stat(ownDir); err == nil {
		own, err := readCRDDir(ownDir, nil)
		if err != nil {
			return nil, err
		}
		for _, c := range own {
			if prev, dup := seen[c.crd.Name]; dup {
				return nil, fmt.Errorf("CRD %s is defined twice: %s and %s", c.crd.Name, prev, c.file)
			}
			seen[c.crd.Name] = c.file
			out = append(out, c)
		}
	}
	ownNames := make(map[string]bool, len(seen))
	for n := range seen {
		ownNames[n] = true
	}

	sharedDir := SharedCRDDir(root)
	if st, err := os.Stat(sharedDir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("upstream CRD directory %s is missing (the repository expects ../shared beside it)", sharedDir)
	}
	shared, err := readCRDDir(sharedDir, excludedSharedDirs)
	if err != nil {
		return nil, err
	}
	if len(shared) == 0 {
		return nil, fmt.Errorf("no CustomResourceDefinitions found under %s", sharedDir)
	}
	for _, c := range shared {
		if ownNames[c.crd.Name] {
			continue // ours (config/crd) replaces the upstream copy
		}
		if prev, dup := seen[c.crd.Name]; dup {
			return nil, fmt.Errorf("CRD %s is defined twice: %s and %s", c.crd.Name, prev, c.file)
		}
		seen[c.crd.Name] = c.file
		out = append(out, c)
	}
	fromModules, err := readModuleCRDs(root)
	if err != nil {
		return nil, err
	}
	for _, c := range fromModules {
		if _, dup := seen[c.crd.Name]; dup {
			continue // ../shared/crds has it now: that copy wins
		}
		seen[c.crd.Name] = c.file
		out = append(out, c)
	}
	return out, nil
}

// swapSharedRelease replaces the CRDs read from each key directory of
// shared/crds (its files directly in it) with those of the value directory.
func swapSharedRelease(root string, files []crdFile, swap map[string]string) ([]crdFile, error) {
	shared := SharedCRDDir(root)
	out := files[:0:0]
	for _, f := range files {
		rel, err := filepath.Rel(shared, filepath.Dir(f.file))
		if err == nil {
			if _, replaced := swap[filepath.ToSlash(rel)]; replaced {
				continue
			}
		}
		out = append(out, f)
	}
	for from, to := range swap {
		alt, err := readCRDDir(filepath.Join(shared, filepath.FromSlash(to)), nil)
		if err != nil {
			return nil, err
		}
		if len(alt) == 0 {
			return nil, fmt.Errorf("no CustomResourceDefinitions under %s (to replace %s)", to, from)
		}
		out = append(out, alt...)
	}
	return out, nil
}

// moduleCRDs are upstream CRDs a target emits that ../shared/crds does not
// hold, read from the pinned Go module that ships them: Envoy Gateway's
// ClientTrafficPolicy (the Gateway plane's early removal of the client's
// verified team header) from github.com/envoyproxy/gateway at the go.mod
// version, its Helm chart's generated CRD with the template guard lines
// dropped.
var moduleCRDs = []struct{ module, path string }{
	{"github.com/envoyproxy/gateway", "charts/gateway-crds-helm/templates/generated/gateway.envoyproxy.io_clienttrafficpolicies.yaml"},
}

func readModuleCRDs(root string) ([]crdFile, error) {
	var out []crdFile
	for _, mc := range moduleCRDs {
		cmd := exec.Command("go", "mod", "download", "-json", mc.module)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		data, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("locating module %s for its CRDs: %w", mc.module, err)
		}
		var mod struct{ Dir string }
		if err := json.Unmarshal(data, &mod); err != nil || mod.Dir == "" {
			return nil, fmt.Errorf("locating module %s for its CRDs: no directory in %q", mc.module, data)
		}
		file := filepath.Join(mod.Dir, filepath.FromSlash(mc.path))
		raw, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		var kept []string
		for _, line := range strings.Split(string(raw), "\n") {
			if !strings.HasPrefix(strings.TrimSpace(line), "{{") {
				kept = append(kept, line)
			}
		}
		tmp, err := os.MkdirTemp("", "module-crds-")
		if err != nil {
			return nil, err
		}
		f := filepath.Join(tmp, filepath.Base(file))
		if err := os.WriteFile(f, []byte(strings.Join(kept, "\n")), 0o644); err != nil {
			return nil, err
		}
		crds, err := readCRDDir(tmp, nil)
		os.RemoveAll(tmp)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		for i := range crds {
			crds[i].file = file
		}
		out = append(out, crds...)
	}
	return out, nil
}

type crdFile struct {
	file string
	crd  *apiextensionsv1.CustomResourceDefinition
}

// readCRDDir reads every CustomResourceDefinition in *.yaml/*.yml files under
// dir (recursively, in lexical order), skipping the excluded subdirectories
// and documents of other kinds (kustomization files and the like).
func readCRDDir(dir string, exclude []string) ([]crdFile, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			for _, x := range exclude {
				if rel == x {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if ext := filepath.Ext(p); ext == ".yaml" || ext == ".yml" {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading CRDs under %s: %w", dir, err)
	}
	sort.Strings(files)

	var out []crdFile
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		docs, err := splitYAML(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for i, doc := range docs {
			var tm metav1.TypeMeta
			if err := yaml.Unmarshal(doc, &tm); err != nil {
				return nil, fmt.Errorf("%s: document %d: %w", f, i+1, err)
			}
			if tm.Kind != "CustomResourceDefinition" {
				continue
			}
			if tm.APIVersion != apiextensionsv1.SchemeGroupVersion.String() {
				return nil, fmt.Errorf("%s: document %d: CRD apiVersion %q is not supported (want %s)",
					f, i+1, tm.APIVersion, apiextensionsv1.SchemeGroupVersion)
			}
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := yaml.Unmarshal(doc, crd); err != nil {
				return nil, fmt.Errorf("%s: document %d: %w", f, i+1, err)
			}
			if crd.Name == "" {
				return nil, fmt.Errorf("%s: document %d: CRD without metadata.name", f, i+1)
			}
			out = append(out, crdFile{file: f, crd: crd})
		}
	}
	return out, nil
}

// splitYAML splits a multi-document YAML stream into the JSON of each
// non-empty document. Leading comments, bare `---` separators and documents
// holding only comments are skipped. Duplicate mapping keys are an error.
func splitYAML(data []byte) ([][]byte, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out [][]byte
	for i := 1; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		js, err := yaml.YAMLToJSONStrict(doc)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		js = bytes.TrimSpace(js)
		if len(js) == 0 || bytes.Equal(js, []byte("null")) {
			continue
		}
		out = append(out, js)
	}
}

// DecodeYAML decodes a multi-document YAML (or JSON) stream into objects,
// skipping empty documents. A `kind: List` document contributes its items.
// Every object must have apiVersion and kind; duplicate keys are an error.
func DecodeYAML(data []byte) ([]*unstructured.Unstructured, error) {
	docs, err := splitYAML(data)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for i, doc := range docs {
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(doc); err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		if obj.IsList() {
			list, err := obj.ToList()
			if err != nil {
				return nil, fmt.Errorf("document %d: %w", i+1, err)
			}
			for j := range list.Items {
				out = append(out, &list.Items[j])
			}
			continue
		}
		out = append(out, obj)
	}
	return out, nil
}

// Objects decodes the YAML documents a test writes inline (each may hold
// several, separated by ---) as DecodeYAML does; an error fails t.
func Objects(t testing.TB, docs ...string) []*unstructured.Unstructured {
	t.Helper()
	out, err := DecodeYAML([]byte(strings.Join(docs, "\n---\n")))
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	return out
}

// Describe names an object for messages: "apps/v1 Deployment ns/name".
func Describe(obj *unstructured.Unstructured) string {
	name := obj.GetName()
	if ns := obj.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	return fmt.Sprintf("%s %s %s", obj.GetAPIVersion(), obj.GetKind(), name)
}

// ApplyStrict server-side applies obj (field manager FieldManager, force) with
// strict field validation, first creating its namespace if it is missing.
// Unknown or duplicate fields, schema violations and CEL rule violations come
// back as errors. On success obj is replaced by the object the server stored.
func (e *Env) ApplyStrict(ctx context.Context, obj *unstructured.Unstructured) error {
	ri, err := e.resourceFor(ctx, obj)
	if err != nil {
		return err
	}
	body, err := obj.MarshalJSON()
	if err != nil {
		return err
	}
	got, err := ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, body, metav1.PatchOptions{
		FieldManager:    FieldManager,
		Force:           ptrTo(true),
		FieldValidation: metav1.FieldValidationStrict,
	})
	if err != nil {
		return err
	}
	obj.Object = got.Object
	return nil
}

// CreateStrict creates obj with strict field validation (a plain POST, as
// `kubectl create` does), first creating its namespace if it is missing. On
// success obj is replaced by the object the server stored.
func (e *Env) CreateStrict(ctx context.Context, obj *unstructured.Unstructured) error {
	ri, err := e.resourceFor(ctx, obj)
	if err != nil {
		return err
	}
	got, err := ri.Create(ctx, obj, metav1.CreateOptions{
		FieldManager:    FieldManager,
		FieldValidation: metav1.FieldValidationStrict,
	})
	if err != nil {
		return err
	}
	obj.Object = got.Object
	return nil
}

// resourceFor maps obj to its resource, checks its name and namespace, and
// creates the namespace when needed.
func (e *Env) resourceFor(ctx context.Context, obj *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := obj.GroupVersionKind()
	if gvk.Kind == "" || gvk.Version == "" {
		return nil, fmt.Errorf("object %q has no apiVersion/kind", obj.GetName())
	}
	if obj.GetName() == "" {
		return nil, fmt.Errorf("%s: metadata.name is empty", Describe(obj))
	}
	mapping, err := e.Client.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("%s: the API server does not serve this kind (is its CRD installed?): %w", Describe(obj), err)
	}
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		if obj.GetNamespace() != "" {
			return nil, fmt.Errorf("%s: cluster-scoped kind has metadata.namespace set", Describe(obj))
		}
		return e.Dynamic.Resource(mapping.Resource), nil
	}
	ns := obj.GetNamespace()
	if ns == "" {
		return nil, fmt.Errorf("%s: namespaced kind without metadata.namespace (use SetNamespace or ApplyYAMLInNamespace)", Describe(obj))
	}
	if err := e.EnsureNamespace(ctx, ns); err != nil {
		return nil, err
	}
	return e.Dynamic.Resource(mapping.Resource).Namespace(ns), nil
}

// ApplyYAML decodes a multi-document YAML stream and ApplyStrict's each
// object in order. It returns only the failures (nil when everything was
// accepted); each error names the document and the object's kind and name.
func (e *Env) ApplyYAML(ctx context.Context, data []byte) []error {
	return e.applyYAML(ctx, "", data)
}

// ApplyYAMLInNamespace is ApplyYAML after SetNamespace(ns, ...) on every
// object: namespaced objects land in ns whatever metadata.namespace said.
func (e *Env) ApplyYAMLInNamespace(ctx context.Context, ns string, data []byte) []error {
	return e.applyYAML(ctx, ns, data)
}

func (e *Env) applyYAML(ctx context.Context, ns string, data []byte) []error {
	objs, err := DecodeYAML(data)
	if err != nil {
		return []error{fmt.Errorf("decoding YAML: %w", err)}
	}
	if ns != "" {
		e.SetNamespace(ns, objs...)
	}
	var errs []error
	for i, obj := range objs {
		desc := Describe(obj)
		if err := e.ApplyStrict(ctx, obj); err != nil {
			errs = append(errs, fmt.Errorf("object %d (%s): %w", i+1, desc, err))
		}
	}
	return errs
}

// SetNamespace sets metadata.namespace to ns on every namespaced object and
// leaves cluster-scoped ones alone. A kind the server does not know keeps
// its scope as written: it is moved only if it already had a namespace.
func (e *Env) SetNamespace(ns string, objs ...*unstructured.Unstructured) {
	for _, obj := range objs {
		namespaced, err := e.Client.IsObjectNamespaced(obj)
		if err != nil {
			namespaced = obj.GetNamespace() != ""
		}
		if namespaced {
			obj.SetNamespace(ns)
		}
	}
}

// EnsureNamespace creates namespace ns unless it exists.
func (e *Env) EnsureNamespace(ctx context.Context, ns string) error {
	e.nsMu.Lock()
	known := e.nsKnown[ns]
	e.nsMu.Unlock()
	if known {
		return nil
	}
	err := e.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", ns, err)
	}
	e.nsMu.Lock()
	e.nsKnown[ns] = true
	e.nsMu.Unlock()
	return nil
}

var nonDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// NewNamespace creates a namespace with a unique name derived from t.Name()
// and deletes it when t finishes. (envtest runs no namespace controller, so
// the namespace only turns Terminating; its name is never reused.)
func (e *Env) NewNamespace(t testing.TB) string {
	t.Helper()
	base := strings.Trim(nonDNS.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	if len(base) > 50 {
		base = strings.TrimRight(base[:50], "-")
	}
	if base == "" {
		base = "test"
	}
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("testenv: %v", err)
	}
	name := base + "-" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatalf("testenv: creating namespace %s: %v", name, err)
	}
	e.nsMu.Lock()
	e.nsKnown[name] = true
	e.nsMu.Unlock()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = e.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	})
	return name
}

func ptrTo[T any](v T) *T { return &v }

// WriteKubeconfig writes a kubeconfig file for this API server to path, as
// the admin, or impersonating user (with groups) when user is set: the way a
// test hands a real binary (kubectl, the controller) its credentials.
func (e *Env) WriteKubeconfig(path, user string, groups ...string) error {
	c := e.Config
	authInfo := &clientcmdapi.AuthInfo{
		ClientCertificateData: c.CertData,
		ClientKeyData:         c.KeyData,
		Token:                 c.BearerToken,
		Impersonate:           user,
		ImpersonateGroups:     groups,
	}
	cfg := clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"envtest": {Server: c.Host, CertificateAuthorityData: c.CAData}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"envtest": authInfo},
		Contexts:       map[string]*clientcmdapi.Context{"envtest": {Cluster: "envtest", AuthInfo: "envtest"}},
		CurrentContext: "envtest",
	}
	return clientcmd.WriteToFile(cfg, path)
}
