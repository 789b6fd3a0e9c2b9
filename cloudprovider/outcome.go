package cloudprovider

// MutationOutcome is what a mutating cloud call did to the cloud, as far as
// its answer tells. The mutation guard, the server's log line and the
// mutations metric all read this one value.
//
// The outcome is set where the answer is read: the thin clients build their
// errors with cloudhttp.AnswerError (which uses AnswerOutcome), and our own
// errors set theirs with WithOutcome. An error without one is unknown, since
// the call may have reached the cloud; the mutation guard treats an error of
// a call that sent no request as refused.
type MutationOutcome int

const (
	// MutationApplied: the cloud answered with success; the change is made.
	// An error with this outcome is a success whose answer does not give
	// the resulting size (an empty, partial or unparsable body, a size
	// other than asked, an Exoscale operation that timed out or finished
	// partly), so the group is read once.
	MutationApplied MutationOutcome = iota
	// MutationRefused: the cloud, or our own check before any call, refused
	// the request, so nothing changed.
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

// AnswerOutcome maps what the cloud answered to an outcome. status is the
// HTTP status, 0 when no answer arrived (timeout, reset); cloudError says the
// body carries the cloud's own error object (Volcengine's
// ResponseMetadata.Error, sent with HTTP 200 too).
//
//   - no status or a 5xx: unknown, the cloud may have carried it out;
//   - a 4xx (a throttle included), or a 2xx carrying the cloud's error
//     object: refused;
//   - any other 2xx: applied, whatever its body holds.
func AnswerOutcome(status int, cloudError bool) MutationOutcome {
	switch {
	case status >= 400 && status < 500:
		return MutationRefused
	case status >= 200 && status < 300 && cloudError:
		return MutationRefused
	case status >= 200 && status < 300:
		return MutationApplied
	}
	return MutationUnknown
}

// outcomeError states the outcome of an error that is not a cloud answer.
type outcomeError struct {
	err     error
	outcome MutationOutcome
}

func (e *outcomeError) Error() string { return e.err.Error() }
func (e *outcomeError) Unwrap() error { return e.err }

// WithOutcome returns err carrying outcome, for errors that are not a cloud
// answer: our own refusals before any cloud call (MutationRefused), a retry's
// refusal after an attempt the cloud may have carried out (MutationUnknown),
// a change the cloud reported done without its size (MutationApplied). The
// outermost outcome wins. nil stays nil.
func WithOutcome(err error, outcome MutationOutcome) error {
	if err == nil {
		return nil
	}
	return &outcomeError{err: err, outcome: outcome}
}

// Refusal marks err as our own refusal made before any cloud call.
func Refusal(err error) error { return WithOutcome(err, MutationRefused) }

// OutcomeOf returns the outcome of a mutation that returned err: applied for
// nil, else the outermost outcome on err's chain (WithOutcome or an
// APIError), else unknown. It also unwraps OrigErr, which the Volcengine
// SDK's errors use.
func OutcomeOf(err error) MutationOutcome {
	if err == nil {
		return MutationApplied
	}
	if o, ok := statedOutcome(err, 0); ok {
		return o
	}
	return MutationUnknown
}

// maxOutcomeDepth bounds the walk through an error chain.
const maxOutcomeDepth = 32

func statedOutcome(err error, depth int) (MutationOutcome, bool) {
	if err == nil || depth > maxOutcomeDepth {
		return 0, false
	}
	switch e := err.(type) {
	case *outcomeError:
		return e.outcome, true
	case interface{ StatedOutcome() MutationOutcome }:
		// cloudhttp.APIError.
		return e.StatedOutcome(), true
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return statedOutcome(u.Unwrap(), depth+1)
	case interface{ Unwrap() []error }:
		for _, inner := range u.Unwrap() {
			if o, ok := statedOutcome(inner, depth+1); ok {
				return o, true
			}
		}
		return 0, false
	case interface{ OrigErr() error }:
		return statedOutcome(u.OrigErr(), depth+1)
	}
	return 0, false
}

// OutcomeUnknown reports whether a failed mutating call may still have been
// applied by the cloud (OutcomeOf is MutationUnknown). The group is then
// quarantined and re-read before the next mutation, so an absolute size
// computed from a stale snapshot cannot undo the change.
func OutcomeUnknown(err error) bool { return err != nil && OutcomeOf(err) == MutationUnknown }

// SizeUnstated reports whether err is a success whose answer does not give
// the resulting size (OutcomeOf is MutationApplied with an error), so the
// group has to be read once.
func SizeUnstated(err error) bool { return err != nil && OutcomeOf(err) == MutationApplied }
