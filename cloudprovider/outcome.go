package cloudprovider

// MutationOutcome is what a mutating cloud call did to the cloud, as far as
// its answer tells: the one value the mutation guard, the server's log line
// and the mutations metric read, so none of them infers it on its own.
type MutationOutcome int

const (
	// MutationApplied: the cloud answered with success; the change is made.
	MutationApplied MutationOutcome = iota
	// MutationRefused: the cloud (or our own check before any call) refused
	// the request, which proves nothing changed.
	MutationRefused
	// MutationUnknown: no answer, a 5xx, or a refusal that follows an
	// attempt the cloud may have carried out; the change may still land.
	MutationUnknown
)

// String returns the outcome's name as logged and used as a metric label.
func (o MutationOutcome) String() string {
	switch o {
	case MutationApplied:
		return "applied"
	case MutationRefused:
		return "refused"
	default:
		return "unknown"
	}
}

// OutcomeOf returns the outcome of a mutation that returned err.
func OutcomeOf(err error) MutationOutcome {
	switch {
	case err == nil:
		return MutationApplied
	case OutcomeUnknown(err):
		return MutationUnknown
	default:
		return MutationRefused
	}
}
