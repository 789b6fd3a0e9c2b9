package cloudprovider_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

func TestUnknownNodeLookupOncePerKeyPerRefresh(t *testing.T) {
	var u cloudprovider.UnknownNodeLookup
	calls := map[string]int{}
	failing := errors.New("cloud down")
	lookup := func(key string, err error) func(context.Context) error {
		return func(context.Context) error { calls[key]++; return err }
	}
	ctx := context.Background()
	if ran, err := u.Do(ctx, "a", lookup("a", failing)); !ran || !errors.Is(err, failing) {
		t.Fatalf("first lookup: ran %v, err %v", ran, err)
	}
	// The failure is remembered until the next refresh: no call per RPC.
	if ran, err := u.Do(ctx, "a", lookup("a", nil)); ran || !errors.Is(err, failing) {
		t.Fatalf("second lookup in the same refresh: ran %v, err %v; want the first one's error", ran, err)
	}
	if ran, _ := u.Do(ctx, "b", lookup("b", nil)); !ran {
		t.Fatal("another key did not get its lookup")
	}
	u.Refreshed()
	if ran, err := u.Do(ctx, "a", lookup("a", nil)); !ran || err != nil {
		t.Fatalf("after a refresh: ran %v, err %v", ran, err)
	}
	if calls["a"] != 2 || calls["b"] != 1 {
		t.Fatalf("calls %v, want a twice, b once", calls)
	}
}

func TestUnknownNodeLookupEndsBeforeTheDeadline(t *testing.T) {
	var u cloudprovider.UnknownNodeLookup
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	outer, _ := ctx.Deadline()
	_, _ = u.Do(ctx, "a", func(lctx context.Context) error {
		inner, ok := lctx.Deadline()
		if !ok || !inner.Equal(outer.Add(-cloudprovider.LookupMargin)) {
			t.Errorf("lookup deadline %v, want %v", inner, outer.Add(-cloudprovider.LookupMargin))
		}
		return nil
	})
}

func TestUnknownNodeLookupSharesARunningLookup(t *testing.T) {
	var u cloudprovider.UnknownNodeLookup
	release := make(chan struct{})
	started := make(chan struct{})
	done := make(chan error)
	go func() {
		_, err := u.Do(context.Background(), "a", func(context.Context) error {
			close(started)
			<-release
			return errors.New("from the first caller")
		})
		done <- err
	}()
	<-started
	second := make(chan error)
	go func() {
		ran, err := u.Do(context.Background(), "a", func(context.Context) error { return errors.New("second lookup ran") })
		if ran {
			err = errors.New("second caller ran its own lookup")
		}
		second <- err
	}()
	close(release)
	<-done
	if err := <-second; err == nil || err.Error() != "from the first caller" {
		t.Fatalf("second caller got %v, want the first lookup's error", err)
	}
}
