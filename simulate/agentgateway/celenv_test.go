package agentgateway_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/stretchr/testify/require"

	agw "github.com/llmkube/llmkube-compile/simulate/agentgateway"
	target "github.com/llmkube/llmkube-compile/targets/agentgateway"
)

// targetShape lists the target's root variables and the fields of the
// object type `request` is declared with, each as "name: type".
func targetShape(t *testing.T, env *cel.Env) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, v := range env.Variables() {
		ty := v.Type()
		if ty.Kind() != types.StructKind {
			out[v.Name()] = ty.String()
			continue
		}
		names, ok := env.CELTypeProvider().FindStructFieldNames(ty.TypeName())
		require.True(t, ok, "%s: type %s has no fields", v.Name(), ty.TypeName())
		for _, f := range names {
			ft, ok := env.CELTypeProvider().FindStructFieldType(ty.TypeName(), f)
			require.True(t, ok, "%s.%s", ty.TypeName(), f)
			out[v.Name()+"."+f] = ft.Type.String()
		}
	}
	return out
}

// modelShape is the same of the model's environment: request's fields are
// agw.CELRequestFields (the model binds request as a map).
func modelShape(t *testing.T, env *cel.Env) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, v := range env.Variables() {
		if v.Name() == "request" {
			continue
		}
		out[v.Name()] = v.Type().String()
	}
	for f, ty := range agw.CELRequestFields {
		out["request."+f] = ty.String()
	}
	return out
}

// knownDivergences are differences between the emitter's declaration and
// upstream's that are understood and harmless to what the emitter writes;
// each says why. Any other difference fails.
var knownDivergences = map[string]string{
	// cel-go's NativeTypes cannot declare map(string, dyn); upstream's
	// headers are a string for a header sent once and a list for one sent
	// more than once. The emitter's expressions read no request header
	// (json(request.body) and jwt[...] only), and CheckExpression only
	// type-checks them.
	"request.headers": "map(string, dyn) / map(string, string)",
	// Not declared by the emitter: an expression reading them would be
	// refused by its own type check, never accepted wrongly.
	"request.startTime": "google.protobuf.Timestamp / -",
	"request.endTime":   "google.protobuf.Timestamp / -",
}

// TestCELEnvironmentMatchesTheTargets: the target type-checks the CEL it
// emits in its own declaration of agentgateway's environment
// (targets/agentgateway.CELEnv); the model evaluates in its own, written
// from upstream's source (crates/agentgateway/src/cel/types.rs). A
// variable or a request field one side declares and the other does not,
// or declares with another type, fails here, naming the side.
func TestCELEnvironmentMatchesTheTargets(t *testing.T) {
	modelEnv, err := agw.Env()
	require.NoError(t, err)
	targetEnv, err := target.CELEnv()
	require.NoError(t, err)
	model, emitter := modelShape(t, modelEnv), targetShape(t, targetEnv)
	var diffs []string
	for name, mt := range model {
		tt, ok := emitter[name]
		if !ok {
			tt = "-"
		}
		if known, isKnown := knownDivergences[name]; isKnown && known == mt+" / "+tt {
			continue
		}
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("%s: upstream (simulate/agentgateway) declares it as %s; the emitter (targets/agentgateway) does not declare it", name, mt))
		case tt != mt:
			diffs = append(diffs, fmt.Sprintf("%s: upstream (simulate/agentgateway) declares %s; the emitter (targets/agentgateway) declares %s", name, mt, tt))
		}
	}
	for name, tt := range emitter {
		if _, ok := model[name]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: the emitter (targets/agentgateway) declares it as %s; upstream (simulate/agentgateway) has no such variable or field", name, tt))
		}
	}
	sort.Strings(diffs)
	require.Empty(t, diffs, "the emitter's CEL environment differs from upstream's:\n%s", strings.Join(diffs, "\n"))
	require.Equal(t, agw.CELMapVars, target.CELMapVars, "map variables: upstream (simulate) first, the emitter's second")
	// The functions the emitter's expressions call (json, toJson, merge)
	// exist on both sides with the same overloads.
	for _, name := range []string{"json", "toJson", "merge"} {
		fn, ok := targetEnv.Functions()[name]
		require.True(t, ok, "the emitter does not declare function %s", name)
		mf, ok := modelEnv.Functions()[name]
		require.True(t, ok, "the emitter declares function %s; upstream (simulate) does not", name)
		require.Equal(t, len(fn.OverloadDecls()), len(mf.OverloadDecls()), "function %s overloads", name)
	}
}
