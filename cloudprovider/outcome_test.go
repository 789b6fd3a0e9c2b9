package cloudprovider

import (
	"errors"
	"fmt"
	"testing"
)

// sdkErr keeps its cause behind OrigErr only, as the Volcengine SDK's errors do.
type sdkErr struct{ cause error }

func (e sdkErr) Error() string  { return "RequestError: " + e.cause.Error() }
func (e sdkErr) OrigErr() error { return e.cause }

func TestAnswerOutcome(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status     int
		cloudError bool
		want       MutationOutcome
	}{
		{0, false, MutationUnknown}, {500, false, MutationUnknown}, {502, false, MutationUnknown},
		{400, false, MutationRefused}, {404, false, MutationRefused}, {409, false, MutationRefused}, {429, false, MutationRefused},
		{200, true, MutationRefused}, {200, false, MutationApplied}, {202, false, MutationApplied}, {204, false, MutationApplied},
	} {
		if got := AnswerOutcome(tc.status, tc.cloudError); got != tc.want {
			t.Errorf("AnswerOutcome(%d, %v) = %s, want %s", tc.status, tc.cloudError, got, tc.want)
		}
	}
}

func TestOutcomeOf(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		err  error
		want MutationOutcome
	}{
		{"success", nil, MutationApplied},
		{"our own refusal", Errorf(ErrInvalidArgument, "bad delta"), MutationRefused},
		{"unstated error", errors.New("something"), MutationUnknown},
		{"outermost statement wins", WithOutcome(Refusal(errors.New("x")), MutationUnknown), MutationUnknown},
		{"wrapped refusal", fmt.Errorf("resize: %w", Errorf(ErrFailedPrecondition, "max")), MutationRefused},
		{"behind an SDK's OrigErr", sdkErr{Refusal(errors.New("budget"))}, MutationRefused},
		{"joined: first statement", errors.Join(errors.New("a"), Refusal(errors.New("b"))), MutationRefused},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := OutcomeOf(tc.err); got != tc.want {
				t.Fatalf("OutcomeOf(%v) = %s, want %s", tc.err, got, tc.want)
			}
		})
	}
	if MutationApplied.String() != "applied" || MutationRefused.String() != "refused" || MutationUnknown.String() != "unknown" {
		t.Fatal("outcome names changed: they are metric label values and log values")
	}
}
