package depsprobe

import (
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/spf13/cobra"
	_ "github.com/stretchr/testify/require"
	_ "k8s.io/api/apps/v1"
	_ "k8s.io/apimachinery/pkg/util/validation/field"
	_ "k8s.io/client-go/kubernetes"
	_ "sigs.k8s.io/controller-runtime/pkg/envtest"
	_ "sigs.k8s.io/yaml"
)
