package exoapi

import "testing"

func TestInstanceTypeName(t *testing.T) {
	t.Parallel()
	if got := (InstanceType{Family: "gpua5000", Size: "small"}).Name(); got != "gpua5000.small" {
		t.Fatalf("Name = %q", got)
	}
}

func TestOperationDone(t *testing.T) {
	t.Parallel()
	for state, want := range map[string]bool{"": false, OperationPending: false, OperationSuccess: true, OperationFailure: true, OperationTimeout: true} {
		if got := (Operation{State: state}).Done(); got != want {
			t.Errorf("Done(%q) = %v, want %v", state, got, want)
		}
	}
}
