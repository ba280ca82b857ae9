package cli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/llmkube/llmkube-compile/compiler"
)

// Exit codes of diff, as kubectl diff's: 0 no difference, 1 differences,
// more than 1 when no diff could be made.
const (
	ExitDiffNone    = 0
	ExitDiffFound   = 1
	ExitDiffUsage   = ExitUsage // 2: a usage error
	ExitDiffInvalid = 3         // the input is invalid, or --against unreadable or unparsable
)

func (s *streams) diffCmd() *cobra.Command {
	var f commonFlags
	var against string
	c := &cobra.Command{
		Use:   "diff -f FILE --against MANIFESTS",
		Short: "Show how the compiled output differs from previously rendered manifests",
		Long: `diff compiles the input and compares the result, object by object, with a file of
manifests rendered earlier (for example the output of a previous render that is
committed to a GitOps repository; --against - reads them from stdin). It prints
a unified diff per added, removed or changed object. Exit codes follow kubectl
diff: 0 no difference, 1 differences, 2 a usage error, 3 invalid input or an
unreadable or unparsable --against.`,
		RunE: func(_ *cobra.Command, args []string) error {
			if against == "" {
				return usageErr("--against MANIFESTS is required")
			}
			if against == "-" && slices.Contains(append(f.files, args...), "-") {
				return usageErr("stdin can hold either the input or --against, not both")
			}
			var data []byte
			var err error
			if against == "-" {
				data, err = io.ReadAll(io.LimitReader(s.stdin, maxInputBytes))
			} else {
				data, err = os.ReadFile(against)
			}
			if err != nil {
				return &exitError{code: ExitDiffInvalid, err: fmt.Errorf("--against: %v", err)}
			}
			old, err := decodeObjects(data)
			if err != nil {
				return &exitError{code: ExitDiffInvalid, err: fmt.Errorf("--against %s: %v", against, err)}
			}
			objs, err := s.compile(&f, args)
			if ee, ok := err.(*exitError); ok && ee == errInvalid {
				return &exitError{code: ExitDiffInvalid}
			}
			if err != nil {
				return err
			}
			if DiffObjects(s.stdout, old, objs) {
				return &exitError{code: ExitDiffFound}
			}
			return nil
		},
	}
	f.register(c, true)
	c.Flags().StringVar(&against, "against", "", "file of previously rendered manifests to compare with (- reads stdin)")
	return c
}

func objectKey(o *unstructured.Unstructured) string {
	ns := o.GetNamespace()
	if ns != "" {
		ns += "/"
	}
	return fmt.Sprintf("%s %s%s", o.GroupVersionKind().GroupKind().String(), ns, o.GetName())
}

// DiffObjects writes a unified diff per object that differs between old and
// new (an added object diffs against nothing, a removed one to nothing) and
// reports whether there was any.
func DiffObjects(w io.Writer, old, new []*unstructured.Unstructured) bool {
	before := map[string]*unstructured.Unstructured{}
	after := map[string]*unstructured.Unstructured{}
	keys := map[string]bool{}
	for _, o := range old {
		before[objectKey(o)] = o
		keys[objectKey(o)] = true
	}
	for _, o := range new {
		after[objectKey(o)] = o
		keys[objectKey(o)] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	changed := false
	for _, k := range sorted {
		b, a := before[k], after[k]
		from, to := "a/"+k, "b/"+k
		switch {
		case b == nil:
			from = "/dev/null"
		case a == nil:
			to = "/dev/null"
		}
		text, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
			A: yamlLines(b), B: yamlLines(a), FromFile: from, ToFile: to, Context: 3,
		})
		if text != "" {
			changed = true
			fmt.Fprint(w, text)
		}
	}
	return changed
}

// yamlLines renders an object as YAML lines (with their line ends, as
// difflib wants them), so a number read from a file and one built in memory
// compare equal and the diff reads like the manifests. nil has no lines.
func yamlLines(o *unstructured.Unstructured) []string {
	if o == nil {
		return nil
	}
	b, err := yaml.Marshal(o.Object)
	if err != nil {
		return []string{err.Error() + "\n"}
	}
	return difflib.SplitLines(strings.TrimRight(string(b), "\n"))
}

// decodeObjects reads multi-document YAML (or JSON) manifests; a v1 List is flattened.
func decodeObjects(data []byte) ([]*unstructured.Unstructured, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	starts := compiler.DocumentStarts(data)
	var out []*unstructured.Unstructured
	for n := 0; ; n++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := yaml.Unmarshal(doc, &m); err != nil {
			if n < len(starts) {
				// The file's line, not the document's.
				return nil, errors.New(compiler.FileLines(err, starts[n]))
			}
			return nil, err
		}
		if len(m) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		if u.IsList() {
			l, err := u.ToList()
			if err != nil {
				return nil, err
			}
			for i := range l.Items {
				out = append(out, &l.Items[i])
			}
			continue
		}
		out = append(out, u)
	}
}
