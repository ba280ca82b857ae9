package pipeline

// The reasons the pipeline itself reports (cross-router and plane checks);
// the frontend's are compiler's Reason constants. docs/diagnostics.md
// describes every one.
const (
	ReasonDataPlaneNotImplemented = "DataPlaneNotImplemented"
	ReasonNameCollision           = "NameCollision"
	// ReasonNeighbourCheckFailed: a foreign object given beside the routers
	// could not be read by a neighbour check.
	ReasonNeighbourCheckFailed = "NeighbourCheckFailed"
	// ReasonNeighbourNotChecked: a foreign object given beside the routers
	// could not be judged from the objects given (a policy that selects the
	// router's Gateway by label, without the Gateway); a warning that says
	// what to give.
	ReasonNeighbourNotChecked = "NeighbourNotChecked"
)
