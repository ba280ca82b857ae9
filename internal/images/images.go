// Package images is the one home of every container image reference the
// project emits: the router-proxy image that render and the controller put in
// Deployments, and the controller image that config/default and the Helm
// chart install. A reference is Registry/NAME:VERSION, where VERSION is this
// build's version (internal/version), so a binary deploys the images built
// from the same release. `make images` tags its tarballs with the same
// function; tests hold config/default and the chart to it.
package images

import "github.com/llmkube/llmkube-compile/internal/version"

// Registry is where released images are pushed.
const Registry = "ghcr.io/llmkube"

// Image names under Registry. They are also the binaries' names.
const (
	RouterProxy = "router-proxy"
	Controller  = "llmkube-controller"
)

// Ref is the reference of image name at this build's version.
func Ref(name string) string { return Registry + "/" + name + ":" + version.Get().Version }

// RouterProxyRef is the default router-proxy image.
func RouterProxyRef() string { return Ref(RouterProxy) }

// ControllerRef is the default controller image.
func ControllerRef() string { return Ref(Controller) }
