package inspect

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
)

// ScaleUp is a parsed --scale-up value.
type ScaleUp struct {
	Group string
	Delta int
}

// ParseScaleUp parses "<group id>=<delta>". The delta is required: a scale-up
// changes the cloud, so a value missing its "=n" is refused rather than
// guessed. The group id is split at the last "=", since ids may themselves
// contain one.
func ParseScaleUp(s string) (ScaleUp, error) {
	i := strings.LastIndex(s, "=")
	if i < 0 {
		return ScaleUp{}, fmt.Errorf("--scale-up %q: want <group id>=<positive number>, e.g. %s=1", s, s)
	}
	group, delta := s[:i], s[i+1:]
	n, err := strconv.Atoi(delta)
	if err != nil || n <= 0 {
		return ScaleUp{}, fmt.Errorf("--scale-up %q: want <group id>=<positive number>", s)
	}
	if group == "" {
		return ScaleUp{}, fmt.Errorf("--scale-up %q: group id is empty", s)
	}
	return ScaleUp{Group: group, Delta: n}, nil
}

// Action is one mutation inspect performed, for the report.
type Action struct {
	// Call is the RPC sent: NodeGroupIncreaseSize or NodeGroupDeleteNodes.
	Call  string `json:"call"`
	Group string `json:"group"`
	// Delta is the increase asked for.
	Delta int `json:"delta,omitempty"`
	// Nodes are the providerIDs asked to be deleted.
	Nodes []string `json:"nodes,omitempty"`
	// Error is the server's answer when it refused ("" on success).
	Error string `json:"error,omitempty"`
}

// scaleUp sends NodeGroupIncreaseSize as CA does after choosing a group.
func (c client) scaleUp(ctx context.Context, s ScaleUp) Action {
	a := Action{Call: "NodeGroupIncreaseSize", Group: s.Group, Delta: s.Delta}
	cctx, cancel := c.call(ctx)
	defer cancel()
	if _, err := c.api.NodeGroupIncreaseSize(cctx, &protos.NodeGroupIncreaseSizeRequest{Id: s.Group, Delta: int32(s.Delta)}); err != nil {
		a.Error = describe(err)
	}
	return a
}

// deleteNodes resolves each providerID's group with NodeGroupForNode, as CA
// does before a scale-down, then sends one NodeGroupDeleteNodes per group.
// The nodes are sent like real registered nodes (name = providerID, no
// fake-node annotation), so the server applies its min-size rule to them.
func (c client) deleteNodes(ctx context.Context, providerIDs []string) ([]Action, error) {
	var order []string
	byGroup := map[string][]string{}
	for _, id := range providerIDs {
		cctx, cancel := c.call(ctx)
		resp, err := c.api.NodeGroupForNode(cctx, &protos.NodeGroupForNodeRequest{Node: node(id)})
		cancel()
		if err != nil {
			return nil, fmt.Errorf("NodeGroupForNode %s: %s", id, describe(err))
		}
		g := resp.GetNodeGroup().GetId()
		if g == "" {
			return nil, fmt.Errorf("--delete %s: the server says this node is in no node group (not autoscaled)", id)
		}
		if _, ok := byGroup[g]; !ok {
			order = append(order, g)
		}
		byGroup[g] = append(byGroup[g], id)
	}
	actions := make([]Action, 0, len(order))
	for _, g := range order {
		a := Action{Call: "NodeGroupDeleteNodes", Group: g, Nodes: byGroup[g]}
		req := &protos.NodeGroupDeleteNodesRequest{Id: g}
		for _, id := range byGroup[g] {
			req.Nodes = append(req.Nodes, node(id))
		}
		cctx, cancel := c.call(ctx)
		if _, err := c.api.NodeGroupDeleteNodes(cctx, req); err != nil {
			a.Error = describe(err)
		}
		cancel()
		actions = append(actions, a)
	}
	return actions, nil
}

func node(providerID string) *protos.ExternalGrpcNode {
	return &protos.ExternalGrpcNode{ProviderID: providerID, Name: providerID, Labels: map[string]string{}, Annotations: map[string]string{}}
}
