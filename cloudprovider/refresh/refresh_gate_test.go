package refresh

import (
	"context"
	"errors"
	"testing"
)

func TestGateSkipsLookupWhileARefreshRuns(t *testing.T) {
	var g Gate
	ctx := context.Background()
	inner := errors.New("inner ran")
	err := g.Run(ctx, func(ctx context.Context) error {
		// A lookup arriving during a refresh must not run (nor wait).
		if err := g.RunUnlessBusy(ctx, func(context.Context) error { return inner }); err != nil {
			t.Errorf("lookup during a refresh: %v, want nil without running", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.RunUnlessBusy(ctx, func(context.Context) error { return inner }); !errors.Is(err, inner) {
		t.Fatalf("lookup with no refresh running: %v, want it to run", err)
	}
}
