// Package architecture checks the one-way imports docs/architecture.md
// describes, with the go command itself: a change that breaks them fails here.
package architecture

import (
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/llmkube/llmkube-compile/"

// deps lists the packages pkg links (go list -deps), without test files.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "./"+pkg)
	cmd.Dir = "../.."
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return strings.Fields(string(out))
}

func ours(all []string) []string {
	var out []string
	for _, p := range all {
		if strings.HasPrefix(p, module) {
			out = append(out, strings.TrimPrefix(p, module))
		}
	}
	return out
}

var dataPath = []string{"routerproxy"}

func isDataPath(p string) bool {
	for _, banned := range dataPath {
		if p == banned || strings.HasPrefix(p, banned+"/") {
			return true
		}
	}
	return false
}

// TestCompilerAndControllerLinkNoDataPath: the controller and the compile
// path (the pipeline every command compiles through) link the router-proxy's
// contract (proxyapi), never its engine, its HTTP server or the provider
// translators.
func TestCompilerAndControllerLinkNoDataPath(t *testing.T) {
	assert.Contains(t, ours(deps(t, "cmd/llmkube-controller")), "proxyapi")
	for _, pkg := range []string{"cmd/llmkube-controller", "pipeline"} {
		linked := ours(deps(t, pkg))
		for _, p := range linked {
			assert.False(t, isDataPath(p), "%s links %s", pkg, p)
		}
	}
}

// TestCLIReachesTheEngineOnlyToTestRoutes: llmkube-compile links the
// router-proxy only for `test` and `explain`, which run requests through the
// router-proxy's own request handling (simulate/proxyplane). No other package
// of ours in the CLI imports the data path.
func TestCLIReachesTheEngineOnlyToTestRoutes(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \",\"}}", "./cmd/llmkube-compile")
	cmd.Dir = "../.."
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	gateway := "simulate/proxyplane"
	found := false
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, " ")
		if !strings.HasPrefix(pkg, module) {
			continue
		}
		pkg = strings.TrimPrefix(pkg, module)
		if pkg == gateway || isDataPath(pkg) {
			found = found || pkg == gateway
			continue
		}
		for _, imp := range strings.Split(imports, ",") {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			imp = strings.TrimPrefix(imp, module)
			assert.False(t, isDataPath(imp), "%s imports %s; only %s may", pkg, imp, gateway)
		}
	}
	assert.True(t, found, "llmkube-compile no longer links %s", gateway)
}

// TestLeavesImportNoKubernetes: the contract, the shared facts, the JSON
// walker and the content classifier (with its compiled-in lexicon) are
// leaves the router-proxy links; they import no Kubernetes package and
// nothing of ours but each other.
func TestLeavesImportNoKubernetes(t *testing.T) {
	allowed := map[string][]string{
		"api/wellknown":                  {"api/wellknown"},
		"routerproxy/internal/jsonscan":  {"routerproxy/internal/jsonscan"},
		"routerproxy/classifier":         {"api/wellknown", "routerproxy/classifier", "routerproxy/classifier/lexicon", "routerproxy/internal/jsonscan"},
		"routerproxy/classifier/lexicon": {"routerproxy/classifier/lexicon"},
		"proxyapi":                       {"proxyapi", "api/wellknown"},
		"routerproxy/engine":             {"routerproxy/engine", "proxyapi", "api/wellknown", "routerproxy/internal/jsonscan", "routerproxy/classifier", "routerproxy/classifier/lexicon"},
	}
	for pkg, ok := range allowed {
		all := deps(t, pkg)
		for _, p := range all {
			assert.False(t, strings.HasPrefix(p, "k8s.io/") || strings.HasPrefix(p, "sigs.k8s.io/"), "%s links %s", pkg, p)
		}
		for _, p := range ours(all) {
			assert.Contains(t, ok, p, "%s links %s", pkg, p)
		}
	}
}

// TestRouterProxyLinksNoTypedClientset: the router-proxy reaches the API
// server through the dynamic client only. client-go's typed clients and
// informers register every API group, which doubled its resident memory
// (48 MB idle against 24 MB); the activation policy itself links no
// Kubernetes at all.
func TestRouterProxyLinksNoTypedClientset(t *testing.T) {
	for _, p := range deps(t, "cmd/router-proxy") {
		for _, banned := range []string{"k8s.io/client-go/kubernetes", "k8s.io/client-go/informers", "k8s.io/api/core/v1", "sigs.k8s.io/controller-runtime"} {
			assert.False(t, p == banned || strings.HasPrefix(p, banned+"/"), "router-proxy links %s", p)
		}
	}
	for _, p := range deps(t, "routerproxy/activation") {
		assert.False(t, strings.HasPrefix(p, "k8s.io/"), "routerproxy/activation links %s", p)
	}
}

// TestControllerNamesNoPlane: the controller reaches a data plane only
// through targets.Target and targets.Cluster; it neither imports a plane's
// folder nor names a plane in its code.
func TestControllerNamesNoPlane(t *testing.T) {
	for _, p := range ours(deps(t, "controller")) {
		assert.False(t, strings.HasPrefix(p, "targets/"), "controller links %s", p)
	}
	namesNoPlane(t, "controller")
}

// planeName is a data plane named in code: its constant, or a conversion
// of its name.
var planeName = regexp.MustCompile(`\bDataPlane(Proxy|Gateway|AgentGateway)\b|DataPlane\("[A-Za-z]+"\)`)

// namesNoPlane fails for every plane named in dir's non-test Go files.
func namesNoPlane(t *testing.T, dir string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("../..", dir, "*.go"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		assert.Empty(t, planeName.FindAllString(string(src), -1), "%s names a data plane; say it in the plane's folder (capability table, model)", f)
	}
}

// TestModelsImportNoTarget: the request-path models under simulate/ judge
// what the emitters under targets/ produce, so they know upstream on their
// own (their own decoding of the emitted objects, their own copy of each
// plane's CEL environment) and find a backend's objects from the spec and
// the plane's own rules (the pods a pool selects, the endpoint a backend
// is sent to), never by the emitters' generated names: no package under
// simulate/ imports a package under targets/ or internal/naming (which
// holds the emitters' object names), outside its tests, nor links one
// through another package. A shared type, constant or name would be wrong
// on both sides at once and every routing test would still pass.
func TestModelsImportNoTarget(t *testing.T) {
	isTarget := func(p string) bool {
		return p == module+"targets" || strings.HasPrefix(p, module+"targets/") || p == module+"internal/naming"
	}
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \",\"}}", "./simulate/...")
	cmd.Dir = "../.."
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	models := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, " ")
		if !strings.HasPrefix(pkg, module) || isTarget(pkg) {
			continue
		}
		if strings.HasPrefix(pkg, module+"simulate") {
			models++
		}
		for _, imp := range strings.Split(imports, ",") {
			assert.False(t, isTarget(imp), "%s imports %s, and a model under simulate/ links it: a model must not share the emitter's types, constants or names",
				strings.TrimPrefix(pkg, module), strings.TrimPrefix(imp, module))
		}
	}
	assert.GreaterOrEqual(t, models, 3, "go list found the models under simulate/")
}

// TestCapabilityTablesReadOnlyPlanes: a plane's capability table
// (targets/<plane>/capabilities.go) imports neither the compiler nor the API
// types: its rows are capability.Row, and package capability links nothing of
// ours but ir (and what ir links) and config/crd.
func TestCapabilityTablesReadOnlyPlanes(t *testing.T) {
	files, err := filepath.Glob("../../targets/*/capabilities.go")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range file.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			for _, banned := range []string{"compiler", "api/v1alpha1"} {
				assert.NotEqual(t, module+banned, p, "%s imports %s", f, p)
			}
		}
	}
	for _, p := range ours(deps(t, "capability")) {
		assert.Contains(t, []string{"capability", "ir", "api/wellknown", "config/crd"}, p, "capability links %s", p)
	}
}

// TestGofmt: every Go file is as gofmt writes it (make fmt).
func TestGofmt(t *testing.T) {
	files := exec.Command("git", "ls-files", "*.go")
	files.Dir = "../.."
	out, err := files.Output()
	require.NoError(t, err)
	// gofmt of the toolchain that runs the tests, whatever PATH holds.
	root, err := exec.Command("go", "env", "GOROOT").Output()
	require.NoError(t, err)
	gofmt := filepath.Join(strings.TrimSpace(string(root)), "bin", "gofmt")
	cmd := exec.Command(gofmt, append([]string{"-l"}, strings.Fields(string(out))...)...)
	cmd.Dir = "../.."
	bad, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", bad)
	assert.Empty(t, strings.TrimSpace(string(bad)), "run make fmt")
}

// TestCompilerNamesNoPlane: what a data plane ignores, refuses or requires
// is its capability table's (targets/<plane>/capabilities.go), which the
// compiler applies row by row, and how a plane's requests are played is its
// model's (simulate/<plane>, listed in simulate/builtin); neither the
// compiler's nor routingtest's own source names a plane (the default,
// v1.DefaultDataPlane, is the API's).
func TestCompilerNamesNoPlane(t *testing.T) {
	namesNoPlane(t, "compiler")
	namesNoPlane(t, "routingtest")
}

// TestProductionBinariesLinkNoModel: the request-path models (simulate/...)
// and the routing tests that drive them serve the CLI's test and explain;
// the controller and the router-proxy link neither.
func TestProductionBinariesLinkNoModel(t *testing.T) {
	for _, bin := range []string{"cmd/llmkube-controller", "cmd/router-proxy"} {
		for _, p := range ours(deps(t, bin)) {
			assert.False(t, p == "simulate" || strings.HasPrefix(p, "simulate/") || p == "routingtest", "%s links %s", bin, p)
		}
	}
}

// TestShippedProgramsLinkNoTestHelper: the helpers under test/ (envtest,
// the pool simulator, poll, syncbuf, tcprelay, ...) serve tests and tools
// only; the three programs users run link none of them.
func TestShippedProgramsLinkNoTestHelper(t *testing.T) {
	for _, bin := range []string{"cmd/llmkube-compile", "cmd/llmkube-controller", "cmd/router-proxy"} {
		for _, p := range ours(deps(t, bin)) {
			assert.False(t, strings.HasPrefix(p, "test/"), "%s links %s", bin, p)
		}
	}
}
