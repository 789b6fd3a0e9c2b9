package exoscale

import (
	"errors"
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi/fakeapi"
)

// TestBusyPoolQueued: a cloud that queues a change to a busy pool accepts
// the second IncreaseSize at once and applies it when the pool is running.
func TestBusyPoolQueued(t *testing.T) {
	t.Parallel()
	o := defaultEnvOptions()
	o.fake.Busy = fakeapi.BusyQueue
	e := newTestEnv(t, o)
	e.refresh(t)
	g := e.group(t, e.workersPool)
	ctx := ctx5s(t)
	for range 2 {
		if err := g.IncreaseSize(ctx, 1); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := g.TargetSize(ctx); n != 5 {
		t.Fatalf("target %d, want 5", n)
	}
	if p, _ := e.fake.Pool(e.workersPool); p.Size != 4 {
		t.Fatalf("cloud size %d while the second change is queued, want 4", p.Size)
	}
	e.refresh(t)
	if n, _ := g.TargetSize(ctx); n != 5 {
		t.Fatalf("target %d after a Refresh with the change still queued, want 5", n)
	}
	e.clock.Advance(2 * time.Minute)
	e.refresh(t)
	e.clock.Advance(2 * time.Minute)
	e.refresh(t)
	if p, _ := e.fake.Pool(e.workersPool); p.Size != 5 {
		t.Fatalf("cloud size %d once the pool is running again, want 5", p.Size)
	}
}

// TestQuotaAsFailedOperation: when the cloud accepts a scale past the quota
// and fails its operation, CA learns it as quota exhaustion: at once as
// ResourceExhausted when the operation has already failed, later as
// out-of-resources creation errors when it fails afterwards.
func TestQuotaAsFailedOperation(t *testing.T) {
	t.Parallel()
	o := defaultEnvOptions()
	o.fake.QuotaAsFailedOperation = true
	e0 := newTestEnv(t, o)
	e0.fake.SetQuotaLimit(1)
	e0.clock.Advance(quotaTTL)
	e0.refresh(t)
	if err := e0.group(t, e0.workersPool).IncreaseSize(ctx5s(t), 1); !errors.Is(err, cloudprovider.ErrQuotaExceeded) {
		t.Fatalf("IncreaseSize with an operation failed at once: %v, want quota exceeded", err)
	}

	o.fake.OperationDelay = time.Second
	e := newTestEnv(t, o)
	e.fake.SetQuotaLimit(1)
	e.clock.Advance(quotaTTL)
	e.refresh(t)
	g := e.group(t, e.workersPool)
	ctx := ctx5s(t)
	if err := g.IncreaseSize(ctx, 1); err != nil {
		t.Fatalf("IncreaseSize: %v (this cloud accepts and fails the operation)", err)
	}
	e.fake.Settle()
	e.refresh(t)
	nodes, err := g.Nodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	failed := 0
	for _, in := range nodes {
		if in.Status != nil && in.Status.ErrorInfo != nil {
			if in.Status.ErrorInfo.ErrorClass != cloudprovider.OutOfResourcesErrorClass {
				t.Fatalf("error info %+v, want out-of-resources", in.Status.ErrorInfo)
			}
			failed++
		}
	}
	if failed != 1 {
		t.Fatalf("%d failed slots, want 1: %+v", failed, nodes)
	}
}
