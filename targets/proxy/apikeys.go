package proxy

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/llmkube/llmkube-compile/api/wellknown"
	"github.com/llmkube/llmkube-compile/internal/naming"
	"github.com/llmkube/llmkube-compile/ir"
	"github.com/llmkube/llmkube-compile/proxyapi"
	"github.com/llmkube/llmkube-compile/targets"
)

// apiKeySources is policy.auth.apiKeys in the router-proxy's config: each
// Secret at the directory apiKeyVolumes mounts it at.
func apiKeySources(in []ir.APIKeySource) []proxyapi.APIKeySource {
	var out []proxyapi.APIKeySource
	for _, k := range in {
		out = append(out, proxyapi.APIKeySource{SecretName: k.SecretName, Team: k.Team, Dir: wellknown.APIKeysDir(k.SecretName), ExpiresAt: k.ExpiresAt})
	}
	return out
}

// apiKeyVolumes mount each Secret of policy.auth.apiKeys read-only at its
// wellknown.APIKeysDir. A Secret volume (not environment variables) because
// the kubelet updates its files when the Secret changes, and the
// router-proxy reads them again: a rotated key takes effect without a
// restart. Optional: a missing Secret admits nobody by its keys (the
// router-proxy's /status names it) instead of keeping every pod from
// starting; the kubelet fills the volume once the Secret exists.
func (e *emitter) apiKeyVolumes() ([]corev1.Volume, []corev1.VolumeMount) {
	a := e.r.Policy.Auth
	if a == nil {
		return nil, nil
	}
	var volumes []corev1.Volume
	var mounts []corev1.VolumeMount
	optional := true
	mode := int32(0o440)
	for _, k := range a.APIKeys {
		name := naming.ProxyAPIKeysVolumeName(k.SecretName)
		volumes = append(volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: k.SecretName, Optional: &optional, DefaultMode: &mode,
		}}})
		mounts = append(mounts, corev1.VolumeMount{Name: name, MountPath: wellknown.APIKeysDir(k.SecretName), ReadOnly: true})
	}
	return volumes, mounts
}

// ReasonAPIKeysNotLoaded: the router-proxy reports keys of
// policy.auth.apiKeys it does not accept (a Secret missing or empty, an
// empty key, a value two keys share). The router is Degraded: every other
// caller is served, those keys admit nobody.
const ReasonAPIKeysNotLoaded = "APIKeysNotLoaded"

// noteAPIKeys makes the router Degraded with what the router-proxy could not
// load of its API keys. The controller reads no Secret: the router-proxy
// reads the files the kubelet mounts and says, by Secret and key name
// (never a value), what it holds. A Secret created or fixed later is taken
// by the router-proxy without a restart, and the next status read clears
// the condition.
func noteAPIKeys(obs *targets.Observation, keys *proxyapi.APIKeyStatus) {
	if keys == nil || len(keys.Problems) == 0 {
		return
	}
	msg := "the router-proxy accepts no key of policy.auth.apiKeys from: " + strings.Join(keys.Problems, "; ") +
		" (it takes a created or fixed Secret without a restart)"
	if obs.Degraded != "" {
		obs.Degraded += "; " + msg
		return
	}
	obs.DegradedReason, obs.Degraded = ReasonAPIKeysNotLoaded, msg
}
