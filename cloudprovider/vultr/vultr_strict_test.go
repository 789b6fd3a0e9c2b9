package vultr

import (
	"errors"
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr/vultrapi/fakeapi"
)

// TestResizeRefusedWhilePoolBusy: where a pool refuses a resize while its
// nodes are still being created, CA gets FailedPrecondition (retry on a
// later loop), the target stays what the cloud has, and the same resize
// succeeds once the pool is active. Under the other busy policies the
// second resize is simply accepted.
func TestResizeRefusedWhilePoolBusy(t *testing.T) {
	for _, busy := range busyVariants {
		t.Run("busy="+string(busy), func(t *testing.T) {
			e := newTestEnv(t, withFake(func(o *fakeapi.Options) { o.Busy = busy }))
			e.refresh()
			g := e.group("a-main")
			if err := g.IncreaseSize(e.ctx(), 1); err != nil {
				t.Fatal(err)
			}
			err := g.IncreaseSize(e.ctx(), 1)
			if busy != fakeapi.BusyRefuse {
				if err != nil {
					t.Fatalf("second IncreaseSize: %v", err)
				}
				return
			}
			if !errors.Is(err, cloudprovider.ErrFailedPrecondition) {
				t.Fatalf("IncreaseSize while the pool is pending: %v, want FailedPrecondition", err)
			}
			if n, _ := g.TargetSize(e.ctx()); n != 4 {
				t.Fatalf("target %d after the refusal, want 4", n)
			}
			e.refresh()
			if n, _ := g.TargetSize(e.ctx()); n != 4 {
				t.Fatalf("target %d after Refresh, want 4", n)
			}
			e.clock.Advance(5 * time.Minute)
			e.refresh()
			if err := g.IncreaseSize(e.ctx(), 1); err != nil {
				t.Fatalf("IncreaseSize once active: %v", err)
			}
			if p := e.pool("a-main"); p.Quantity != 5 {
				t.Fatalf("cloud quantity %d, want 5", p.Quantity)
			}
		})
	}
}
