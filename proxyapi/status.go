package proxyapi

import "time"

// Status is the router-proxy's live state, served on the admin port at
// wellknown.StatusPath. The controller reads it to report backend health and
// budget use.
type Status struct {
	Router   RouterInfo      `json:"router"`
	Backends []BackendStatus `json:"backends"`
	Budgets  []BudgetStatus  `json:"budgets,omitempty"`
	// BudgetStore is the shared budget store's state; nil for in-memory budgets.
	BudgetStore *BudgetStoreStatus `json:"budgetStore,omitempty"`
	// Pools are the ModelPools of pooled backends.
	Pools []PoolStatus `json:"pools,omitempty"`
	// APIKeys are policy.auth.apiKeys as this replica holds them; nil
	// without API keys.
	APIKeys *APIKeyStatus `json:"apiKeys,omitempty"`
	// RateLimits are policy.rateLimits' counters.
	RateLimits []RateLimitStatus `json:"rateLimits,omitempty"`
}

// RateLimitStatus is one rate limit over its window: how many teams (or
// keys) it is counting, and the highest fraction of a cap any of them uses.
type RateLimitStatus struct {
	Name     string `json:"name"`
	Counting int    `json:"counting"`
	// Utilization is 0 to 1, formatted with 6 decimals.
	Utilization string `json:"utilization"`
}

// BudgetStoreStatus is the shared budget store as one replica sees it.
type BudgetStoreStatus struct {
	Healthy bool `json:"healthy"`
	// Failure is the mode while it is down: closed or open.
	Failure string `json:"failure"`
	Message string `json:"message,omitempty"`
}

// BackendStatus is one backend's health as the proxy sees it.
type BackendStatus struct {
	Name    string `json:"name"`
	Healthy bool   `json:"healthy"`
	// Quarantined is true while passive health checks skip the backend.
	Quarantined bool `json:"quarantined"`
	// LastProbeTime is when the last active probe completed; zero before the first.
	LastProbeTime time.Time `json:"lastProbeTime,omitzero"`
	Message       string    `json:"message,omitempty"`
	// RateLimitedUntil is when the provider's rate limit of an external
	// backend resets: the proxy skips it until then. Zero when not held.
	RateLimitedUntil time.Time `json:"rateLimitedUntil,omitzero"`
	// QuotaExhaustedUntil is how long the proxy skips an external backend
	// whose provider said its quota is spent. Zero when not held.
	QuotaExhaustedUntil time.Time `json:"quotaExhaustedUntil,omitzero"`
}

// BudgetStatus is one budget's use over its rolling window. For a team
// budget the use of every team is summed and Utilization is the highest
// team's.
type BudgetStatus struct {
	Name       string `json:"name"`
	TokensUsed int64  `json:"tokensUsed"`
	// USDUsed is a decimal string, like the spec's money fields.
	USDUsed string `json:"usdUsed"`
	// Utilization is the consumed fraction, 0 to 1, formatted with 6 decimals;
	// with both limits it is the larger of the two fractions.
	Utilization string `json:"utilization"`
}

// PoolStatus is one ModelPool as one replica sees it.
type PoolStatus struct {
	Name    string   `json:"name"`
	Members []string `json:"members"`
	// Resident is the member serving; empty when the pool is cold, loading,
	// or not read yet (Known false).
	Resident string `json:"resident,omitempty"`
	Known    bool   `json:"known"`
	// Pending is the member being made resident: by this replica, or by the
	// replica holding the pool's Lease.
	Pending string `json:"pending,omitempty"`
	// LeaseHolder is the replica holding the pool's swap Lease, if any.
	LeaseHolder string `json:"leaseHolder,omitempty"`
	// Waiting counts requests held for a member that is not resident.
	Waiting int `json:"waiting"`
	// Swaps counts the swaps this replica completed.
	Swaps int64 `json:"swaps"`
	// Message is the last problem a swap met.
	Message string `json:"message,omitempty"`
}
