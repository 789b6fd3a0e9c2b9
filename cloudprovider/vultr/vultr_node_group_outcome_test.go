package vultr

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudprovidertest"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/grpctest"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/metrics"
)

// mutationCount reads mutations_total for one group, operation and outcome.
func mutationCount(t *testing.T, reg *prometheus.Registry, group, operation, outcome string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"node_group": group, "operation": operation, "outcome": outcome}
	total := 0.0
	for _, f := range families {
		if f.GetName() != "cluster_autoscaler_provider_mutations_total" {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if v, ok := want[l.GetName()]; ok && v != l.GetValue() {
					continue series
				}
			}
			total += m.GetCounter().GetValue()
		}
	}
	return total
}

// TestIdentityMismatchLoggedAndCountedRefused: CA asks to delete a node
// whose node-id label and providerID disagree. The provider refuses it
// before any cloud call, so the server's log line and mutations_total say
// refused, the group is not quarantined, and the next change is sent.
func TestIdentityMismatchLoggedAndCountedRefused(t *testing.T) {
	buf := cloudprovidertest.CaptureKlog(t)
	e := newTestEnv(t)
	reg := prometheus.NewRegistry()
	client := grpctest.Serve(t, e.p, externalgrpc.Options{Metrics: metrics.New(reg)})
	if _, err := client.Refresh(e.ctx(), &protos.RefreshRequest{}); err != nil {
		t.Fatal(err)
	}
	n := realNode(e.main, e.main.Nodes[0])
	e.fake.ResetRequests()
	_, err := client.NodeGroupDeleteNodes(e.ctx(), &protos.NodeGroupDeleteNodesRequest{Id: e.main.ID, Nodes: []*protos.ExternalGrpcNode{{
		Name: n.Name, Labels: n.Labels, ProviderID: ProviderIDPrefix + e.main.Nodes[1].ID,
	}}})
	if err == nil {
		t.Fatal("a node whose label and providerID disagree was deleted")
	}
	if got := len(e.fake.Requests()); got != 0 {
		t.Fatalf("the refusal made %d cloud calls", got)
	}
	klog.Flush()
	var line string
	for _, l := range strings.Split(buf.String(), "\n") {
		if strings.Contains(l, `"Node group change not applied"`) && strings.Contains(l, `nodeGroup="`+e.main.ID+`"`) {
			line = l
		}
	}
	if !strings.Contains(line, `outcome="refused"`) {
		t.Fatalf("the mutation's log line does not say refused:\n%s", line)
	}
	t.Logf("log line: %s", line)
	if got := mutationCount(t, reg, e.main.ID, metrics.OperationDelete, "refused"); got != 1 {
		t.Fatalf(`mutations_total{operation="delete",outcome="refused"} = %v, want 1`, got)
	}
	if got := mutationCount(t, reg, e.main.ID, metrics.OperationDelete, "unknown"); got != 0 {
		t.Fatalf(`mutations_total{operation="delete",outcome="unknown"} = %v, want 0`, got)
	}
	if until := e.group(e.main.ID).Status(e.ctx()).QuarantinedUntil; !until.IsZero() {
		t.Fatalf("the refusal quarantined the group until %s", until)
	}
	if _, err := client.NodeGroupDeleteNodes(e.ctx(), &protos.NodeGroupDeleteNodesRequest{Id: e.main.ID, Nodes: []*protos.ExternalGrpcNode{{
		Name: n.Name, Labels: n.Labels, ProviderID: n.Spec.ProviderID,
	}}}); err != nil {
		t.Fatalf("the next delete after the refusal: %v", err)
	}
}

// TestQuantityBelowOneRefusedWithoutQuarantine: the client's own refusal of
// a node_quantity below one, reached through the group's guard, sends no
// request; its outcome (what the server logs and counts) is refused and the
// group is not quarantined.
func TestQuantityBelowOneRefusedWithoutQuarantine(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	g := e.group(e.second.ID)
	e.fake.ResetRequests()
	err := g.Do(e.ctx(), g.readPool, func() (groupstate.Plan, error) {
		return groupstate.Plan{Send: func(ctx context.Context) (groupstate.Effect, error) { return g.setQuantity(ctx, "decrease", 1, 0) }}, nil
	})
	if err == nil {
		t.Fatal("node_quantity 0 was sent")
	}
	if got := cloudprovider.OutcomeOf(err); got != cloudprovider.MutationRefused {
		t.Fatalf("outcome %s, want refused: %v", got, err)
	}
	if got := len(e.fake.Requests()); got != 0 {
		t.Fatalf("the refusal made %d cloud calls", got)
	}
	if until := g.Status(e.ctx()).QuarantinedUntil; !until.IsZero() {
		t.Fatalf("the refusal quarantined the group until %s", until)
	}
}
