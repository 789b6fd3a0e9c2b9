package cloudprovider

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestErrorfAndRetryAfterError(t *testing.T) {
	err := Errorf(ErrFailedPrecondition, "group %s at max %d", "a", 3)
	if !errors.Is(err, ErrFailedPrecondition) || !strings.Contains(err.Error(), "group a at max 3") {
		t.Fatalf("Errorf: %v", err)
	}
	ra := &RetryAfterError{Err: Errorf(ErrRateLimited, "list"), RetryAfter: 2 * time.Second}
	if !errors.Is(ra, ErrRateLimited) || !strings.Contains(ra.Error(), "retry after 2s") {
		t.Fatalf("RetryAfterError: %v", ra)
	}
	var target *RetryAfterError
	if !errors.As(error(ra), &target) || target.RetryAfter != 2*time.Second {
		t.Fatal("errors.As")
	}
}

func TestInstanceStateString(t *testing.T) {
	for s, want := range map[InstanceState]string{InstanceRunning: "running", InstanceCreating: "creating", InstanceDeleting: "deleting", 0: "unspecified"} {
		if s.String() != want {
			t.Errorf("%d.String() = %q", s, s.String())
		}
	}
}
