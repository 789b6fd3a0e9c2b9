package cloudprovider

import (
	"errors"
	"testing"
)

func TestOutcomeOf(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		err  error
		want MutationOutcome
	}{
		{"success", nil, MutationApplied},
		{"4xx refusal", &APIError{Cloud: "c", Operation: "op", Status: 409, Class: ErrFailedPrecondition}, MutationRefused},
		{"5xx", &APIError{Cloud: "c", Operation: "op", Status: 503, Class: ErrUnavailable}, MutationUnknown},
		{"no answer", &APIError{Cloud: "c", Operation: "op", Class: ErrUnavailable, Cause: errors.New("reset")}, MutationUnknown},
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
