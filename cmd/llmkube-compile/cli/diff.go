package cli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

func (s *streams) diffCmd() *cobra.Command {
	var f commonFlags
	var against string
	c := &cobra.Command{
		Use:   "diff -f FILE --against MANIFESTS",
		Short: "Show how the compiled output differs from previously rendered manifests",
		Long: `diff compiles the input and compares the result, object by object, with a file of
manifests rendered earlier (for example the output of a previous render that is
committed to a GitOps repository). It prints one section per added, removed or
changed object and exits 0 when there is no difference, 1 when there is one or
the input is invalid, and 2 on usage errors.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if against == "" {
				return usageErr("--against MANIFESTS is required")
			}
			data, err := os.ReadFile(against)
			if err != nil {
				return usageErr("read %s: %v", against, err)
			}
			old, err := decodeObjects(data)
			if err != nil {
				return &exitError{code: ExitInvalid, err: fmt.Errorf("%s: %v", against, err)}
			}
			objs, err := s.compile(&f)
			if err != nil {
				return err
			}
			if DiffObjects(s.stdout, old, objs) {
				return &exitError{code: ExitInvalid}
			}
			return nil
		},
	}
	f.register(c, true)
	c.Flags().StringVar(&against, "against", "", "file of previously rendered manifests to compare with")
	return c
}

func objectKey(o *unstructured.Unstructured) string {
	ns := o.GetNamespace()
	if ns != "" {
		ns += "/"
	}
	return fmt.Sprintf("%s %s%s", o.GroupVersionKind().GroupKind().String(), ns, o.GetName())
}

// DiffObjects writes the differences between old and new object sets and
// reports whether there were any.
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
		switch {
		case b == nil:
			changed = true
			fmt.Fprintf(w, "+ %s (added)\n", k)
		case a == nil:
			changed = true
			fmt.Fprintf(w, "- %s (no longer generated)\n", k)
		default:
			if d := cmp.Diff(yamlLines(b), yamlLines(a)); d != "" {
				changed = true
				fmt.Fprintf(w, "~ %s (-before +after):\n%s", k, d)
			}
		}
	}
	return changed
}

// yamlLines renders an object as YAML lines, so a number read from a file and
// one built in memory compare equal and the diff reads like the manifests.
func yamlLines(o *unstructured.Unstructured) []string {
	b, err := yaml.Marshal(o.Object)
	if err != nil {
		return []string{err.Error()}
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

// decodeObjects reads multi-document YAML (or JSON) manifests; a v1 List is flattened.
func decodeObjects(data []byte) ([]*unstructured.Unstructured, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []*unstructured.Unstructured
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := yaml.Unmarshal(doc, &m); err != nil {
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
