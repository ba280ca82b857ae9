package providers

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llmkube/llmkube-compile/api/wellknown"
)

// TestTranslatorsFollowProviderTable holds the translators to the provider
// table: a provider marked Translated has a translator, and no other has one.
func TestTranslatorsFollowProviderTable(t *testing.T) {
	for name, p := range wellknown.Providers {
		_, has := translators[name]
		assert.Equal(t, p.Translated, has, "provider %s", name)
	}
	for name := range translators {
		_, known := wellknown.Providers[name]
		assert.True(t, known, "translator %s has no row in wellknown.Providers", name)
	}
}
