// Package cli is the llmkube-compile command line: offline render, validate
// and diff of ModelRouters. It reads files, runs the pipeline and prints; it
// holds no compiler logic of its own.
package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/llmkube/llmkube-compile/compiler"
	"github.com/llmkube/llmkube-compile/diag"
	"github.com/llmkube/llmkube-compile/internal/version"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/pipeline"
	"github.com/llmkube/llmkube-compile/platform"
	"github.com/llmkube/llmkube-compile/targets/builtin"
)

// Exit codes.
const (
	ExitOK      = 0
	ExitInvalid = 1
	ExitUsage   = 2
)

// exitError carries an exit code out of a cobra command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func usageErr(format string, args ...any) error {
	return &exitError{code: ExitUsage, err: fmt.Errorf(format, args...)}
}

// errInvalid means diagnostics were already printed.
var errInvalid = &exitError{code: ExitInvalid}

// Run executes the CLI with args and returns the process exit code.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRoot(stdin, stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintf(stderr, "Error: %v\n", ee.err)
		}
		return ee.code
	}
	// Anything cobra itself rejected (unknown flag, bad arguments) is a usage error.
	fmt.Fprintf(stderr, "Error: %v\n", err)
	return ExitUsage
}

type streams struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

func newRoot(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	s := &streams{stdin: stdin, stdout: stdout, stderr: stderr}
	root := &cobra.Command{
		Use:           "llmkube-compile",
		Short:         "Compile LLMKube ModelRouters into data-plane manifests",
		SilenceUsage:  true,
		SilenceErrors: true,
		// --version prints the same line as every binary of this project.
		Version: version.Get().Version,
	}
	root.SetVersionTemplate(version.String("llmkube-compile") + "\n")
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageErr("%v", err) })
	root.AddCommand(s.renderCmd(), s.validateCmd(), s.diffCmd(), s.testCmd(), s.explainCmd(), s.explainFieldCmd(), s.versionCmd())
	return root
}

type commonFlags struct {
	files            []string
	recursive        bool
	namespace        string
	dataPlane        string
	warningsAsErrors bool
	operator         platform.Settings
}

// register binds the flags every compiling command takes. Input files may
// also be given as arguments (validate *.yaml). withProxyImage is false for
// validate, which renders no Deployment.
func (f *commonFlags) register(c *cobra.Command, withProxyImage bool) {
	fl := c.Flags()
	fl.StringArrayVarP(&f.files, "filename", "f", nil, "file, directory or http(s) URL with ModelRouters and the InferenceServices and ModelPools they reference (repeatable; - reads stdin)")
	fl.BoolVarP(&f.recursive, "recursive", "R", false, "read the directories given with -f recursively")
	fl.StringVarP(&f.namespace, "namespace", "n", "", "namespace for objects that name none; an object naming another one is an error")
	fl.StringVar(&f.dataPlane, "data-plane", "", "compile every router for this data plane ("+strings.Join(builtin.Registry().Names(), ", ")+") instead of its spec.dataPlane")
	fl.BoolVar(&f.warningsAsErrors, "warnings-as-errors", false, "treat every warning as an error (exit 1, no output)")
	_ = c.RegisterFlagCompletionFunc("data-plane", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return builtin.Registry().Names(), cobra.ShellCompDirectiveNoFileComp
	})
	_ = c.MarkFlagFilename("filename", "yaml", "yml", "json")
	if withProxyImage {
		f.operator.Bind(fl)
	} else {
		f.operator.BindOTLP(fl)
	}
	c.Args = cobra.ArbitraryArgs
	c.ValidArgsFunction = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"yaml", "yml", "json"}, cobra.ShellCompDirectiveFilterFileExt
	}
}

func (f *commonFlags) options(args []string) (pipeline.Options, error) {
	f.files = append(f.files, args...)
	if len(f.files) == 0 {
		return pipeline.Options{}, usageErr("at least one -f FILE (or a FILE argument) is required")
	}
	if err := f.operator.Validate(); err != nil {
		return pipeline.Options{}, usageErr("%v", err)
	}
	opts := pipeline.Options{Compile: compiler.Options{Operator: f.operator}}
	if f.dataPlane != "" {
		if names := builtin.Registry().Names(); !slices.Contains(names, f.dataPlane) {
			return opts, usageErr("--data-plane must be one of %s, not %q", strings.Join(names, ", "), f.dataPlane)
		}
		opts.Compile.DataPlane = ir.DataPlane(f.dataPlane)
	}
	return opts, nil
}

// load reads and decodes every input; an input that cannot be read is a
// usage error.
func (s *streams) load(f *commonFlags) (*compiler.Inputs, diag.List, error) {
	srcs, err := s.readInputs(f.files, f.recursive)
	if err != nil {
		return nil, nil, err
	}
	in := &compiler.Inputs{Namespace: f.namespace}
	var diags diag.List
	for _, src := range srcs {
		diags = append(diags, in.Decode(src.name, src.data)...)
	}
	return in, append(diags, in.Ignored()...), nil
}

func (s *streams) printDiags(diags diag.List) {
	for _, d := range diags.Sorted() {
		if d.Severity == diag.Warning {
			fmt.Fprintf(s.stderr, "warning: %s\n", d)
		} else {
			fmt.Fprintln(s.stderr, d)
		}
	}
}

// compile runs decode and the pipeline, printing diagnostics; the result is
// nil when anything was refused.
func (s *streams) compile(f *commonFlags, args []string) ([]*unstructured.Unstructured, error) {
	return s.compileDiags(f, args, nil)
}

func nonNil(l diag.List) diag.List {
	if l == nil {
		return diag.List{}
	}
	return l
}

// compileDiags is compile, also handing the diagnostics to out when set.
func (s *streams) compileDiags(f *commonFlags, args []string, out *diag.List) ([]*unstructured.Unstructured, error) {
	opts, err := f.options(args)
	if err != nil {
		return nil, err
	}
	in, diags, err := s.load(f)
	if err != nil {
		return nil, err
	}
	if len(in.Routers) == 0 && !diags.HasErrors() {
		diags = append(diags, diag.Diagnostic{Severity: diag.Error, File: strings.Join(f.files, ","), Reason: "NoModelRouter", Message: "no ModelRouter found in the input"})
	}
	// Every router that decoded goes through the whole checklist, even when
	// the input had errors, so every problem is reported at once; the output
	// is withheld all the same.
	objs, more := pipeline.Run(in, builtin.Registry(), opts)
	diags = append(diags, more...)
	if f.warningsAsErrors {
		for i := range diags {
			diags[i].Severity = diag.Error
		}
	}
	if out != nil {
		*out = diags
	}
	s.printDiags(diags)
	if diags.HasErrors() {
		return nil, errInvalid
	}
	return objs, nil
}

func (s *streams) renderCmd() *cobra.Command {
	var f commonFlags
	var output string
	c := &cobra.Command{
		Use:   "render -f FILE [-f FILE ...]",
		Short: "Print the objects every ModelRouter in the input compiles to",
		Long: `render compiles every ModelRouter in the input for its data plane and prints the
generated objects to stdout, deterministically. Invalid input prints nothing to
stdout, one line per problem to stderr, and exits 1. Warnings go to stderr and
do not change the exit code.`,
		RunE: func(_ *cobra.Command, args []string) error {
			if output != "yaml" && output != "json" {
				return usageErr("-o must be yaml or json, not %q", output)
			}
			objs, err := s.compile(&f, args)
			if err != nil {
				return err
			}
			out, err := Encode(objs, output)
			if err != nil {
				return err
			}
			_, err = s.stdout.Write(out)
			return err
		},
	}
	f.register(c, true)
	c.Flags().StringVarP(&output, "output", "o", "yaml", "output format: yaml (multi-document) or json (a v1 List)")
	_ = c.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"yaml", "json"}, cobra.ShellCompDirectiveNoFileComp
	})
	return c
}

func (s *streams) validateCmd() *cobra.Command {
	var f commonFlags
	var output string
	c := &cobra.Command{
		Use:   "validate -f FILE [-f FILE ...]",
		Short: "Check ModelRouters without printing manifests",
		Long: `validate runs the whole compiler, including the chosen data plane's checks, and
exits 0 when every router is valid. Otherwise it prints one line per problem to
stderr as FILE: ModelRouter/NAME: FIELD.PATH: MESSAGE (Reason) and exits 1.
With -o json it prints {"valid": bool, "diagnostics": [...]} to stdout
instead, each diagnostic with severity, file, object, field, reason and
message.`,
		RunE: func(_ *cobra.Command, args []string) error {
			switch output {
			case "text":
				_, err := s.compile(&f, args)
				return err
			case "json":
			default:
				return usageErr("-o must be text or json, not %q", output)
			}
			var diags diag.List
			quiet := &streams{stdout: io.Discard, stderr: io.Discard, stdin: s.stdin}
			_, err := quiet.compileDiags(&f, args, &diags)
			if err != nil && !errors.Is(err, errInvalid) {
				return err
			}
			enc := json.NewEncoder(s.stdout)
			enc.SetIndent("", "  ")
			if encErr := enc.Encode(map[string]any{"valid": !diags.HasErrors(), "diagnostics": nonNil(diags.Sorted())}); encErr != nil {
				return encErr
			}
			return err
		},
	}
	f.register(c, false)
	c.Flags().StringVarP(&output, "output", "o", "text", "output format: text, or json (the diagnostics on stdout)")
	return c
}

// Encode renders objects as multi-document YAML or a JSON v1 List.
func Encode(objs []*unstructured.Unstructured, format string) ([]byte, error) {
	var buf bytes.Buffer
	if format == "json" {
		items := make([]any, len(objs))
		for i, o := range objs {
			items[i] = o.Object
		}
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(map[string]any{"apiVersion": "v1", "kind": "List", "items": items}); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	for i, o := range objs {
		if i > 0 {
			buf.WriteString("---\n")
		}
		b, err := yaml.Marshal(o.Object)
		if err != nil {
			return nil, err
		}
		buf.Write(b)
	}
	return buf.Bytes(), nil
}
