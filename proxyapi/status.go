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
