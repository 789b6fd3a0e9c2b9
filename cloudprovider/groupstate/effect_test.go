package groupstate

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
)

// send runs one change of g whose call marks a request sent and answers
// effect and err.
func send(g *Group, effect Effect, err error) error {
	return g.Do(context.Background(), func(context.Context) error { return nil }, func() (Plan, error) {
		return Plan{Send: func(ctx context.Context) (Effect, error) {
			cloudhttp.MarkSent(ctx)
			return effect, err
		}}, nil
	})
}

func TestEffectAppliedOnlyWhenTheCloudAppliedTheChange(t *testing.T) {
	t.Parallel()
	slot := func(n int) string { return fmt.Sprintf("slot-%d", n) }
	effect := Effect{Target: 1, SetTarget: true, Deleting: []string{"a"}, DropSlots: []int{1}, Pending: &Operation{ID: "op-1"}}
	cases := []struct {
		name    string
		err     error
		applied bool
	}{
		{"success", nil, true},
		{"applied, size unstated", cloudprovider.WithOutcome(errors.New("empty answer"), cloudprovider.MutationApplied), true},
		{"refused", cloudprovider.Refusal(errors.New("400")), false},
		{"unknown", cloudprovider.WithOutcome(errors.New("no answer"), cloudprovider.MutationUnknown), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			l, _ := newTestLedger()
			g := l.Group("g", slot, false)
			g.Install(l.Begin(), View{Min: 0, Max: 5, Target: 3, Instances: running("a", "b"), Unfilled: 1}, Settling{})
			_ = send(g, effect, c.err)
			applied := g.Read().Target == 1 && g.deleting().holds("a") && g.failed().len() == 0 && len(g.Pending()) == 1
			untouched := g.Read().Target == 3 && !g.deleting().holds("a") && g.failed().len() == 1 && len(g.Pending()) == 0
			if c.applied && !applied {
				t.Errorf("effect not applied: target %d, deleting a %v, slots %d, pending %d", g.Read().Target, g.deleting().holds("a"), g.failed().len(), len(g.Pending()))
			}
			if !c.applied && !untouched {
				t.Errorf("effect of a call the cloud did not apply changed the state: target %d, deleting a %v, slots %d, pending %d", g.Read().Target, g.deleting().holds("a"), g.failed().len(), len(g.Pending()))
			}
		})
	}
}

func TestEffectOfACallThatSentNothingIsNotApplied(t *testing.T) {
	t.Parallel()
	l, _ := newTestLedger()
	g := l.Group("g", nil, false)
	g.Install(l.Begin(), View{Max: 5, Target: 2, Unfilled: -1}, Settling{})
	err := g.Do(context.Background(), func(context.Context) error { return nil }, func() (Plan, error) {
		return Plan{Send: func(context.Context) (Effect, error) {
			return Resize(4), cloudprovider.WithOutcome(errors.New("client check"), cloudprovider.MutationApplied)
		}}, nil
	})
	if cloudprovider.OutcomeOf(err) != cloudprovider.MutationRefused {
		t.Errorf("outcome of a call that sent nothing = %v, want refused", cloudprovider.OutcomeOf(err))
	}
	if got := g.Target(); got != 2 {
		t.Errorf("target = %d after a call that sent nothing, want 2", got)
	}
}

func TestEffectReadInstallsTheAnswerThenTheRest(t *testing.T) {
	t.Parallel()
	l, _ := newTestLedger()
	g := l.Group("g", nil, false)
	g.Install(l.Begin(), View{Min: 1, Max: 5, Target: 2, Instances: running("a", "b"), Unfilled: -1}, Settling{})
	effect := Effect{Read: func(served View) View {
		served.Target, served.Instances = 4, running("a", "b", "c")
		return served
	}, Deleting: []string{"c"}}
	if err := send(g, effect, nil); err != nil {
		t.Fatal(err)
	}
	v := g.Read()
	if v.Target != 4 || len(v.Instances) != 3 || v.Max != 5 {
		t.Errorf("served after the answer's read = target %d, %d instances, max %d; want 4, 3, 5", v.Target, len(v.Instances), v.Max)
	}
	if !g.deleting().holds("c") {
		t.Error("the effect's Deleting was not applied after its read")
	}
}

func TestPendingOperationStampedWhenAnswered(t *testing.T) {
	t.Parallel()
	l, clock := newTestLedger()
	g := l.Group("g", nil, false)
	g.Install(l.Begin(), View{Max: 5, Target: 1, Unfilled: -1}, Settling{})
	before := l.Begin()
	clock.Advance(time.Minute)
	if err := send(g, Effect{Pending: &Operation{ID: "op-1", Data: "scale"}}, nil); err != nil {
		t.Fatal(err)
	}
	after := l.Begin()
	ops := g.Pending()
	if len(ops) != 1 || ops[0].ID != "op-1" || ops[0].Data != "scale" {
		t.Fatalf("pending = %+v, want op-1", ops)
	}
	if !ops[0].Submitted.Equal(clock.Now()) {
		t.Errorf("submitted %v, want the ledger's time %v", ops[0].Submitted, clock.Now())
	}
	if before.after(ops[0].Seq) || !after.after(ops[0].Seq) {
		t.Errorf("Listing.after: a listing begun before the call says it shows the operation (%v), or one begun after says not (%v)", before.after(ops[0].Seq), after.after(ops[0].Seq))
	}
}

func TestChangedAtFollowsChangesTheCloudMayHaveApplied(t *testing.T) {
	t.Parallel()
	l, clock := newTestLedger()
	g := l.Group("g", nil, false)
	g.Install(l.Begin(), View{Max: 5, Target: 1, Unfilled: -1}, Settling{})
	if !g.ChangedAt().IsZero() {
		t.Fatalf("ChangedAt = %v before any change", g.ChangedAt())
	}
	clock.Advance(time.Minute)
	_ = send(g, Effect{}, cloudprovider.Refusal(errors.New("400")))
	if !g.ChangedAt().IsZero() {
		t.Errorf("a refused change set ChangedAt to %v", g.ChangedAt())
	}
	_ = send(g, Resize(2), nil)
	if at := clock.Now(); !g.ChangedAt().Equal(at) {
		t.Errorf("ChangedAt = %v after an applied change, want %v", g.ChangedAt(), at)
	}
}

func TestGuardRefusesARetiredGroupWithoutACall(t *testing.T) {
	t.Parallel()
	l, _ := newTestLedger()
	g := l.Group("g", nil, false)
	g.Install(l.Begin(), View{Max: 5, Target: 1, Unfilled: -1}, Settling{})
	g.retire()
	called := false
	err := g.Do(context.Background(), func(context.Context) error { return nil }, func() (Plan, error) {
		called = true
		return Plan{Send: func(context.Context) (Effect, error) { return Resize(2), nil }}, nil
	})
	if !errors.Is(err, cloudprovider.ErrNodeGroupNotFound) || cloudprovider.OutcomeOf(err) != cloudprovider.MutationRefused {
		t.Errorf("mutation of a retired group = %v (outcome %v), want NodeGroupNotFound, refused", err, cloudprovider.OutcomeOf(err))
	}
	if called {
		t.Error("the plan of a retired group's mutation ran")
	}
}

func TestLiveCountsInstancesThatStay(t *testing.T) {
	t.Parallel()
	l, _ := newTestLedger()
	g := l.Group("g", nil, false)
	ins := running("a", "b", "c")
	ins[2].Status = &cloudprovider.InstanceStatus{State: cloudprovider.InstanceDeleting}
	g.Install(l.Begin(), View{Max: 5, Target: 3, Instances: ins, Unfilled: -1}, Settling{})
	g.deleting().add("b")
	if got := g.Live(); got != 1 {
		t.Errorf("Live = %d, want 1 (b is being deleted by us, c listed Deleting)", got)
	}
}

func pnode(pid string, registered bool) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n-" + pid}, Spec: corev1.NodeSpec{ProviderID: pid}}
	if !registered {
		n.Annotations = map[string]string{cloudprovider.FakeNodeReasonAnnotation: "unregistered"}
	}
	return n
}

func byProviderID(n *corev1.Node) (string, error) { return n.Spec.ProviderID, nil }

func TestPlanDeletion(t *testing.T) {
	t.Parallel()
	slot := func(n int) string { return fmt.Sprintf("slot-%d", n) }
	newGroup := func() *Group {
		l, _ := newTestLedger()
		g := l.Group("g", slot, false)
		ins := running("a", "b", "c", "gone")
		ins[3].Status = &cloudprovider.InstanceStatus{State: cloudprovider.InstanceDeleting}
		g.Install(l.Begin(), View{Min: 2, Max: 6, Target: 5, Instances: ins, Unfilled: 1}, Settling{})
		g.deleting().add("c")
		return g
	}
	cases := []struct {
		name      string
		nodes     []*corev1.Node
		member    func(string) bool
		wantErr   error
		instances []string
		slots     []int
	}{
		{name: "one instance", nodes: []*corev1.Node{pnode("a", true)}, instances: []string{"a"}},
		{name: "already leaving skipped", nodes: []*corev1.Node{pnode("c", true), pnode("gone", true)}},
		{name: "slot", nodes: []*corev1.Node{pnode("slot-1", false)}, slots: []int{1}},
		{name: "foreign", nodes: []*corev1.Node{pnode("x", true)}, wantErr: cloudprovider.ErrInvalidArgument},
		{name: "member accepts", nodes: []*corev1.Node{pnode("x", true)}, member: func(pid string) bool { return pid == "x" }, instances: []string{"x"}},
		{name: "twice", nodes: []*corev1.Node{pnode("a", true), pnode("a", true)}, wantErr: cloudprovider.ErrInvalidArgument},
		{name: "nil", nodes: []*corev1.Node{nil}, wantErr: cloudprovider.ErrInvalidArgument},
		{name: "below min", nodes: []*corev1.Node{pnode("a", true), pnode("b", true), pnode("slot-1", false), pnode("x", true)}, member: func(string) bool { return true }, wantErr: cloudprovider.ErrFailedPrecondition},
		{name: "unregistered below min", nodes: []*corev1.Node{pnode("a", false), pnode("b", false), pnode("slot-1", false), pnode("x", false)}, member: func(string) bool { return true }, instances: []string{"a", "b", "x"}, slots: []int{1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			d, err := newGroup().PlanDeletion(c.nodes, byProviderID, c.member)
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) {
					t.Errorf("err = %v, want %v", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(d.Instances) != fmt.Sprint(c.instances) || fmt.Sprint(d.Slots) != fmt.Sprint(c.slots) {
				t.Errorf("deletion = %v, slots %v; want %v, slots %v", d.Instances, d.Slots, c.instances, c.slots)
			}
			if d.Empty() != (len(c.instances) == 0 && len(c.slots) == 0) {
				t.Errorf("Empty = %v", d.Empty())
			}
		})
	}
	t.Run("resolver refuses", func(t *testing.T) {
		t.Parallel()
		bad := errors.New("bad node")
		if _, err := newGroup().PlanDeletion([]*corev1.Node{pnode("a", true)}, func(*corev1.Node) (string, error) { return "", bad }, nil); !errors.Is(err, bad) {
			t.Errorf("err = %v, want the resolver's", err)
		}
	})
}

type retiring struct {
	id      string
	retired bool
}

func (r *retiring) retire() { r.retired = true }

func TestGroupsNextReusesCreatesAndRetires(t *testing.T) {
	t.Parallel()
	l, _ := newTestLedger()
	a, b := &retiring{id: "a"}, &retiring{id: "b"}
	s := Groups[*retiring]{byID: map[string]*retiring{"a": a, "b": b}, order: []string{"a", "b"}}
	var installed []string
	next := s.Next([]string{"b", "c"}, func(id string) *retiring { return &retiring{id: id} }, func(r *retiring) { installed = append(installed, r.id) }, l)
	if got, _ := next.Get("b"); got != b {
		t.Error("Next made a new group for one the set held")
	}
	if fmt.Sprint(next.IDs()) != "[b c]" || fmt.Sprint(installed) != "[b c]" {
		t.Errorf("ids %v, installed %v; want [b c] both", next.IDs(), installed)
	}
	if !a.retired || b.retired {
		t.Errorf("retired: a %v, b %v; want a only", a.retired, b.retired)
	}
}
