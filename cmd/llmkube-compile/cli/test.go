package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/routingtest"
	"github.com/llmkube/llmkube-compile/targets/builtin"
)

// Exit codes of test and explain beyond ExitOK and ExitUsage: a failing
// case is 1, invalid input (a router or a test file) 3.
const (
	ExitTestFailed   = 1
	ExitInvalidInput = 3
)

var errInvalidInput = &exitError{code: ExitInvalidInput}

// prepared is what test and explain share: the compiled planes.
type prepared struct {
	planes []*routingtest.Plane
	files  []*routingtest.File
}

// readTests decodes the RoutingTests of the inputs and of --tests; a
// --tests file with no RoutingTest, or with another kind beside them, is
// an error.
func (s *streams) readTests(f *commonFlags, tests []string) ([]*routingtest.File, diag.List, error) {
	srcs, err := s.readInputs(append(append([]string(nil), f.files...), tests...), f.recursive)
	if err != nil {
		return nil, nil, err
	}
	var files []*routingtest.File
	var diags diag.List
	for _, src := range srcs {
		fs, d := routingtest.Decode(src.name, src.data)
		files = append(files, fs...)
		diags = append(diags, d...)
		if !isTestSource(src.name, tests) || d.HasErrors() {
			continue
		}
		if len(fs) == 0 {
			// A file in --tests that holds no RoutingTest is a mistake
			// (a misspelt kind, a router put there), not a file to skip.
			diags = append(diags, diag.Diagnostic{Severity: diag.Error, File: src.name, Reason: "NoRoutingTest",
				Message: fmt.Sprintf("a --tests file holds no %s (kinds found: %s); fix its kind, or pass routers with -f", routingtest.Kind, routingtest.KindsIn(src.data))})
		} else if other := routingtest.OtherKinds(src.data); len(other) > 0 {
			// Beside RoutingTests, another document in a --tests file is
			// read by nothing (--tests objects are not inputs).
			diags = append(diags, diag.Diagnostic{Severity: diag.Error, File: src.name, Reason: "NotARoutingTest",
				Message: fmt.Sprintf("a --tests file holds only %s documents, and %s would be read by nothing; move it to an input (-f) or fix its kind", routingtest.Kind, strings.Join(other, ", "))})
		}
	}
	return files, diags, nil
}

// prepare decodes routers and test files, refuses invalid input (exit 3),
// and compiles every router for every data plane tested.
func (s *streams) prepare(f *commonFlags, args, tests []string, needTests bool) (*prepared, error) {
	opts, err := f.options(args)
	if err != nil {
		return nil, err
	}
	planeNames := builtin.Registry().Names()
	if f.dataPlane != "" {
		planeNames = []string{f.dataPlane}
		opts.Compile.DataPlane = ""
	}
	in, diags, err := s.load(f)
	if err != nil {
		return nil, err
	}
	diags = slices.DeleteFunc(diags, func(d diag.Diagnostic) bool {
		return d.Reason == "IgnoredObject" // the test files themselves, beside the routers
	})
	if len(in.Routers) == 0 && !diags.HasErrors() {
		diags = append(diags, diag.Diagnostic{Severity: diag.Error, File: strings.Join(f.files, ","), Reason: "NoModelRouter", Message: "no ModelRouter found in the input"})
	}
	p := &prepared{}
	var d diag.List
	if p.files, d, err = s.readTests(f, tests); err != nil {
		return nil, err
	}
	diags = append(diags, d...)
	if needTests && len(p.files) == 0 && !diags.HasErrors() {
		diags = append(diags, diag.Diagnostic{Severity: diag.Error, File: strings.Join(append(f.files, tests...), ","), Reason: "NoRoutingTest", Message: "no RoutingTest found in the inputs or --tests"})
	}
	if diags.HasErrors() {
		s.printDiags(diags)
		return nil, errInvalidInput
	}
	var dps []ir.DataPlane
	for _, n := range planeNames {
		dps = append(dps, ir.DataPlane(n))
	}
	p.planes, err = routingtest.Planes(in, builtin.Registry(), opts, dps, in.Foreign)
	if err != nil {
		return nil, err
	}
	// A router no tested plane compiles is invalid input; one refused by
	// some planes only is a result of those planes (a case may expect it).
	if d := routingtest.Uncompilable(p.planes); d.HasErrors() {
		s.printDiags(append(diags, d...))
		return nil, errInvalidInput
	}
	if d := routingtest.Check(p.files, p.planes, f.namespace); d.HasErrors() {
		s.printDiags(append(diags, d...))
		return nil, errInvalidInput
	}
	// The compiler's warnings, as render and validate show them.
	diags = append(diags, routingtest.Warnings(p.planes)...)
	if f.warningsAsErrors && len(diags) > 0 {
		for i := range diags {
			diags[i].Severity = diag.Error
		}
		s.printDiags(diags)
		return nil, errInvalidInput
	}
	s.printDiags(diags) // warnings
	return p, nil
}

// isTestSource reports whether an input came from --tests (a test file's
// objects are not the gateway's).
func isTestSource(name string, tests []string) bool {
	for _, t := range tests {
		if name == t || strings.HasPrefix(name, strings.TrimSuffix(t, "/")+"/") {
			return true
		}
	}
	return false
}

func (s *streams) testCmd() *cobra.Command {
	var f commonFlags
	var tests []string
	var output string
	var coverage, verbose bool
	var failUnder float64
	var runPattern string
	c := &cobra.Command{
		Use:   "test [-f] INPUT... [--tests FILE|DIR]",
		Short: "Run routing tests against every data plane the routers compile for",
		Long: `test runs the RoutingTest cases found in the inputs and in --tests (see
docs/routing-tests.md) on every data plane a router compiles for, or on
--data-plane. Every router of the input sits on its gateway together, and each
plane is judged the way it really routes: the router-proxy's own request
handling (Proxy) and executable models of Envoy Gateway with Envoy AI Gateway
(Gateway) and of agentgateway (AgentGateway). Gateway objects of other teams in
the inputs (HTTPRoutes, SecurityPolicies, AgentgatewayPolicies, ...) sit on the
same gateways. A plane that refuses a router skips its cases, with the reason.

Exit codes: 0 every case passed, 1 a case failed (or coverage is below
--fail-under), 2 usage, 3 invalid input (a router or a test file).`,
		RunE: func(_ *cobra.Command, args []string) error {
			switch output {
			case "text", "json", "junit":
			default:
				return usageErr("-o must be text, json or junit, not %q", output)
			}
			if failUnder < 0 || failUnder > 100 {
				return usageErr("--fail-under must be a percentage between 0 and 100")
			}
			var only *regexp.Regexp
			if runPattern != "" {
				var err error
				if only, err = regexp.Compile(runPattern); err != nil {
					return usageErr("--run %q: %v", runPattern, err)
				}
			}
			p, err := s.prepare(&f, args, tests, true)
			if err != nil {
				return err
			}
			if only != nil {
				// Cases whose "test/case" name matches, as go test -run.
				n := 0
				for _, tf := range p.files {
					tf.Cases = slices.DeleteFunc(tf.Cases, func(c routingtest.Case) bool { return !only.MatchString(tf.Name + "/" + c.Name) })
					n += len(tf.Cases)
				}
				if n == 0 {
					return usageErr("--run %q matches no case", runPattern)
				}
			}
			rep := routingtest.Run(p.files, p.planes, f.namespace)
			rep.FailUnder = failUnder
			switch output {
			case "json":
				err = rep.WriteJSON(s.stdout)
			case "junit":
				err = rep.WriteJUnit(s.stdout, coverage)
				fmt.Fprintln(s.stderr, rep.Summary())
			default:
				rep.WriteText(s.stdout, verbose, coverage || failUnder > 0)
			}
			if err != nil {
				return err
			}
			low := rep.CoverageFailures()
			for _, m := range low {
				fmt.Fprintln(s.stderr, m)
			}
			if rep.NothingRan() {
				fmt.Fprintln(s.stderr, "no case ran on any data plane (every one was skipped): nothing was tested")
			}
			if rep.Failed() > 0 || len(low) > 0 || rep.NothingRan() {
				return &exitError{code: ExitTestFailed}
			}
			return nil
		},
	}
	f.register(c, false)
	c.Flags().StringArrayVar(&tests, "tests", nil, "file or directory of RoutingTest documents (repeatable); tests in the inputs run too")
	c.Flags().StringVarP(&output, "output", "o", "text", "output format: text, json or junit")
	c.Flags().BoolVar(&coverage, "coverage", false, "report the rules, backends and budgets no case exercised")
	c.Flags().StringVar(&runPattern, "run", "", "run only the cases whose test/case name matches this regular expression")
	c.Flags().Float64Var(&failUnder, "fail-under", 0, "fail (exit 1) when a tested router's coverage is below this percentage")
	c.Flags().BoolVarP(&verbose, "verbose", "v", false, "list passing and skipped case runs too")
	return c
}

// explainOptions are explain's flags about the request.
type explainOptions struct {
	model, api, path, claims, issuer, prompt string
	headers, rateLimited                     []string
	invalidToken                             bool
}

func (s *streams) explainCmd() *cobra.Command {
	var f commonFlags
	var o explainOptions
	var router, output string
	var down []string
	c := &cobra.Command{
		Use:   "explain [-f] INPUT... --model M [-H 'K: V']... [--claims k=v,...] [--prompt TEXT]",
		Short: "Show how each data plane routes one request",
		Long: `explain sends one request to every data plane the router compiles for (or
--data-plane), with every router of the input on its gateway, and prints each
plane's decision step by step: the route picked and why, authentication and
authorization, budgets, the backend and what reaches it. --claims sends a
caller's JWT with those claims (issued by the router's issuer unless --issuer).`,
		RunE: func(_ *cobra.Command, args []string) error {
			req, err := o.request()
			if err != nil {
				return err
			}
			if output != "text" && output != "json" {
				return usageErr("-o must be text or json, not %q", output)
			}
			p, err := s.prepare(&f, args, nil, false)
			if err != nil {
				return err
			}
			key, err := pickRouter(p.planes, router, f.namespace)
			if err != nil {
				return err
			}
			if output == "json" {
				var results []routingtest.Result
				for _, pl := range p.planes {
					results = append(results, pl.Serve(key, req, down))
				}
				enc := json.NewEncoder(s.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(map[string]any{"router": key, "results": results})
			}
			for _, pl := range p.planes {
				s.printExplained(pl.Name, pl.Serve(key, req, down))
			}
			return nil
		},
	}
	f.register(c, false)
	fl := c.Flags()
	fl.StringVar(&o.model, "model", "", "the request's model (required)")
	fl.StringArrayVarP(&o.headers, "header", "H", nil, "a request header 'Name: value' (repeatable)")
	fl.StringVar(&o.claims, "claims", "", "send a caller's JWT with these claims (k=v,...)")
	fl.StringVar(&o.issuer, "issuer", "", "the JWT's issuer (default: the router's)")
	fl.BoolVar(&o.invalidToken, "invalid-token", false, "send a JWT no key of the issuer signed")
	fl.StringVar(&router, "router", "", "the router the request is for, [namespace/]name (default: the only one)")
	fl.StringVar(&o.api, "api", routingtest.APIChat, "the protocol the request speaks: chat, messages (Anthropic Messages) or responses (OpenAI Responses)")
	fl.StringVar(&o.path, "path", "", "the request path (default: the protocol's, /v1/chat/completions, /v1/messages or /v1/responses)")
	fl.StringVarP(&output, "output", "o", "text", "output format: text, or json (each plane's result)")
	fl.StringVar(&o.prompt, "prompt", "", "send a chat body with this user message (the router-proxy's content classifier reads it)")
	fl.StringArrayVar(&down, "down", nil, "a backend of the router that fails every attempt (repeatable)")
	fl.StringArrayVar(&o.rateLimited, "rate-limited", nil, "a backend of the router whose provider answers every attempt 429 with Retry-After (repeatable)")
	return c
}

// request is the request explain sends, from its flags, or a usage error.
func (o *explainOptions) request() (routingtest.Request, error) {
	if o.model == "" {
		return routingtest.Request{}, usageErr("--model is required")
	}
	if o.api != routingtest.APIChat && o.api != routingtest.APIMessages && o.api != routingtest.APIResponses {
		return routingtest.Request{}, usageErr("--api must be chat, messages or responses, not %q", o.api)
	}
	req := routingtest.Request{Model: o.model, API: o.api, Path: o.path, Headers: http.Header{}, RateLimited: o.rateLimited}
	if o.prompt != "" {
		// A body in the request's protocol, so the content classifier has
		// a text to read.
		req.Body = map[string]any{"model": o.model, "messages": []any{map[string]any{"role": "user", "content": o.prompt}}}
		if o.api == routingtest.APIResponses {
			req.Body = map[string]any{"model": o.model, "input": o.prompt}
		}
		req.Model = ""
	}
	for _, h := range o.headers {
		k, v, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return req, usageErr("-H %q: want 'Name: value'", h)
		}
		req.Headers.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	if o.claims != "" || o.issuer != "" || o.invalidToken {
		t, err := o.token()
		if err != nil {
			return req, err
		}
		req.Token = t
	}
	return req, nil
}

// token is the caller's JWT of --claims, --issuer and --invalid-token.
func (o *explainOptions) token() (*routingtest.Token, error) {
	t := &routingtest.Token{Issuer: o.issuer, Claims: map[string]any{}, Invalid: o.invalidToken}
	for _, kv := range strings.Split(o.claims, ",") {
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, usageErr("--claims %q: want k=v,...", kv)
		}
		t.Claims[k] = v
	}
	return t, nil
}

// printExplained prints one plane's decision: its steps, the outcome, the
// budgets charged and what reached the backend.
func (s *streams) printExplained(plane ir.DataPlane, res routingtest.Result) {
	fmt.Fprintf(s.stdout, "== %s\n", plane)
	if res.Skipped != "" {
		fmt.Fprintf(s.stdout, "   not served: %s\n", res.Skipped)
		return
	}
	for _, t := range res.Trace {
		fmt.Fprintf(s.stdout, "   %s\n", t)
	}
	fmt.Fprintf(s.stdout, "   => status %d", res.Status)
	if res.Backend != "" {
		fmt.Fprintf(s.stdout, ", backend %s of %s, rule %s, tried %s", res.Backend, res.Router, strconv.Quote(res.Rule), strings.Join(res.Attempts, " -> "))
	}
	fmt.Fprintln(s.stdout)
	if len(res.Budgets) > 0 {
		var bs []string
		for _, b := range res.Budgets {
			bs = append(bs, b.Name+keySuffix(b.Key))
		}
		fmt.Fprintf(s.stdout, "   budgets charged: %s\n", strings.Join(bs, ", "))
	}
	if res.Status < 300 {
		if res.UpstreamModel != "" {
			fmt.Fprintf(s.stdout, "   model sent to the backend: %s\n", res.UpstreamModel)
		}
		fmt.Fprintf(s.stdout, "   headers reaching the backend: %s\n", strings.Join(res.Upstream, ", "))
	}
}

func keySuffix(k string) string {
	if k == "" {
		return ""
	}
	return "[" + k + "]"
}

// pickRouter resolves --router, or the input's only router.
func pickRouter(planes []*routingtest.Plane, router, namespace string) (string, error) {
	all := map[string]bool{}
	for _, p := range planes {
		for k := range p.Routers {
			all[k] = true
		}
	}
	if router != "" {
		key := router
		if !strings.Contains(key, "/") {
			ns := namespace
			if ns == "" {
				ns = "default"
			}
			key = ns + "/" + router
		}
		if !all[key] {
			return "", usageErr("--router %s: the input has no such ModelRouter", router)
		}
		return key, nil
	}
	if len(all) != 1 {
		var keys []string
		for k := range all {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return "", usageErr("the input has %d ModelRouters (%s): choose one with --router", len(keys), strings.Join(keys, ", "))
	}
	for k := range all {
		return k, nil
	}
	return "", nil
}
