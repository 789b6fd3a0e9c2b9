package groupstate

import (
	"context"
	"testing"
	"time"
)

// A change whose call sent no request (its effect is only ours: instances
// left to the cloud's own check, a size already at min) applies its
// effect, but the cloud cannot have changed the group: ChangedAt stays,
// so the provider still reads the cloud's older reports as current.
func TestChangedAtIgnoresAChangeThatSentNothing(t *testing.T) {
	t.Parallel()
	l, clock := newTestLedger()
	g := l.Group("g", nil, false)
	g.Install(l.Begin(), View{Max: 5, Target: 2, Instances: running("a", "b"), Unfilled: -1}, Settling{})
	clock.Advance(time.Minute)
	_ = send(g, Resize(2), nil)
	sentAt := clock.Now()
	clock.Advance(time.Minute)
	err := g.Do(context.Background(), func(context.Context) error { return nil }, func() (Plan, error) {
		return Plan{Send: func(context.Context) (Effect, error) { return Effect{Deleting: []string{"a"}}, nil }}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !g.deleting().holds("a") {
		t.Error("the effect of a change that sent nothing was not applied")
	}
	if !g.ChangedAt().Equal(sentAt) {
		t.Errorf("ChangedAt = %v after a change that sent nothing, want %v (the last one sent)", g.ChangedAt(), sentAt)
	}
}
