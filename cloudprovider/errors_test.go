package cloudprovider

import (
	"errors"
	"strings"
	"testing"
)

func TestErrorf(t *testing.T) {
	err := Errorf(ErrFailedPrecondition, "group %s at max %d", "a", 3)
	if !errors.Is(err, ErrFailedPrecondition) || !strings.Contains(err.Error(), "group a at max 3") {
		t.Fatalf("Errorf: %v", err)
	}
}

func TestInstanceStateString(t *testing.T) {
	for s, want := range map[InstanceState]string{InstanceRunning: "running", InstanceCreating: "creating", InstanceDeleting: "deleting", 0: "unspecified"} {
		if s.String() != want {
			t.Errorf("%d.String() = %q", s, s.String())
		}
	}
}
