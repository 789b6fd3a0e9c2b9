package main

import (
	"context"
	"math/rand"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
)

// allOps are the step kinds with their weights.
var allOps = []string{"refresh", "scale-up", "delete", "decrease", "cancel", "reads", "concurrent"}

var opWeights = map[string]int{"refresh": 20, "scale-up": 20, "delete": 20, "decrease": 10, "cancel": 5, "reads": 15, "concurrent": 15}

// step runs one random operation.
func (s *soaker) step() {
	groups := s.nodeGroups()
	if len(groups) == 0 {
		s.violate("NodeGroups returned no group")
		return
	}
	pick := func() *protos.NodeGroup { return groups[s.rnd.Intn(len(groups))] }
	total := 0
	for _, op := range allOps {
		if s.o.ops[op] {
			total += opWeights[op]
		}
	}
	if total == 0 {
		return
	}
	draw := s.rnd.Intn(total)
	op := ""
	for _, candidate := range allOps {
		if !s.o.ops[candidate] {
			continue
		}
		if draw < opWeights[candidate] {
			op = candidate
			break
		}
		draw -= opWeights[candidate]
	}
	switch op {
	case "refresh":
		s.refresh()
	case "scale-up":
		s.scaleUp(pick(), s.rnd.Int63(), true)
	case "delete":
		s.deleteNodes(pick(), s.rnd.Int63())
	case "decrease":
		s.decrease(pick(), s.rnd.Int63())
	case "cancel":
		s.cancel(pick(), s.rnd.Int63())
	case "reads":
		s.reads(groups)
	default:
		s.concurrent(groups)
	}
}

func (s *soaker) refresh() {
	s.count("refresh")
	_ = s.rpc("Refresh", func(ctx context.Context) error {
		_, err := s.client.Refresh(ctx, &protos.RefreshRequest{})
		return err
	})
}

// scaleUp raises a group's target. Alone (not racing other mutations) it
// also checks that an increase past max is refused.
func (s *soaker) scaleUp(g *protos.NodeGroup, seed int64, alone bool) {
	rnd := rand.New(rand.NewSource(seed))
	v, err := s.view(g)
	if err != nil {
		return
	}
	room := v.maxSize - v.target
	delta := 1
	if room > 0 {
		delta = 1 + rnd.Intn(min(3, room))
	}
	op := "scale-up"
	if room <= 0 || rnd.Intn(10) == 0 {
		// CA never asks past max; the server must refuse it anyway.
		op, delta = "scale-up-past-max", room+1
	}
	s.count(op)
	s.mu.Lock()
	s.lastIncrease[v.id] = s.now()
	s.mu.Unlock()
	err = s.rpc("NodeGroupIncreaseSize", func(ctx context.Context) error {
		_, err := s.client.NodeGroupIncreaseSize(ctx, &protos.NodeGroupIncreaseSizeRequest{Id: v.id, Delta: int32(delta)})
		return err
	})
	s.note("%s %s target %d by %d: %v", op, v.id, v.target, delta, err)
	if op == "scale-up-past-max" && err == nil && alone {
		s.violate("group %s: increase by %d past max %d (target %d) accepted", v.id, delta, v.maxSize, v.target)
	}
}

func running(in *protos.Instance) bool {
	return in.GetStatus().GetInstanceState() == protos.InstanceStatus_instanceRunning
}

func (s *soaker) deleteNodes(g *protos.NodeGroup, seed int64) {
	rnd := rand.New(rand.NewSource(seed))
	v, err := s.view(g)
	if err != nil {
		return
	}
	var candidates []*protos.Instance
	for _, in := range v.instances {
		if st := in.GetStatus().GetInstanceState(); st == protos.InstanceStatus_instanceRunning || st == protos.InstanceStatus_instanceCreating {
			candidates = append(candidates, in)
		}
	}
	rnd.Shuffle(len(candidates), func(i, j int) { candidates[i], candidates[j] = candidates[j], candidates[i] })
	k := min(1+rnd.Intn(2), v.target-v.minSize, len(candidates))
	if k <= 0 {
		return
	}
	req := &protos.NodeGroupDeleteNodesRequest{Id: v.id}
	s.mu.Lock()
	for _, in := range candidates[:k] {
		s.requested[in.GetId()] = true
		name := in.GetId()
		if i := strings.LastIndex(name, "/"); i >= 0 {
			name = "node-" + name[i+1:]
		}
		req.Nodes = append(req.Nodes, &protos.ExternalGrpcNode{ProviderID: in.GetId(), Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}})
	}
	s.mu.Unlock()
	s.count("delete")
	err = s.rpc("NodeGroupDeleteNodes", func(ctx context.Context) error {
		_, err := s.client.NodeGroupDeleteNodes(ctx, req)
		return err
	})
	var asked []string
	for _, n := range req.Nodes {
		asked = append(asked, n.GetProviderID())
	}
	s.note("delete %s target %d nodes %v: %v", v.id, v.target, asked, err)
}

func (s *soaker) decrease(g *protos.NodeGroup, seed int64) {
	rnd := rand.New(rand.NewSource(seed))
	v, err := s.view(g)
	if err != nil {
		return
	}
	registered := 0
	for _, in := range v.instances {
		if running(in) {
			registered++
		}
	}
	room := min(v.target-registered, v.target-v.minSize)
	s.mu.Lock()
	recent := s.now().Sub(s.lastIncrease[v.id]) < s.provisionTimeout
	s.mu.Unlock()
	if room <= 0 || recent {
		return
	}
	delta := 1 + rnd.Intn(room)
	// A decrease may cancel slots whose machines never became ready; note
	// them before the call, since the cloud may pick any of them.
	s.markCancellable(v.id)
	s.count("decrease")
	err = s.rpc("NodeGroupDecreaseTargetSize", func(ctx context.Context) error {
		_, err := s.client.NodeGroupDecreaseTargetSize(ctx, &protos.NodeGroupDecreaseTargetSizeRequest{Id: v.id, Delta: int32(-delta)})
		return err
	})
	s.note("decrease %s target %d registered %d by %d: %v", v.id, v.target, registered, -delta, err)
}

// cancel scales a group up and at once decreases it by one, before the
// cloud lists the new instance, as CA cancels a scale-up it no longer
// needs. The provider may refuse; the cloud may take only instances that
// never became ready (unrequestedLosses).
func (s *soaker) cancel(g *protos.NodeGroup, seed int64) {
	s.scaleUp(g, seed, true)
	v, err := s.view(g)
	if err != nil || v.target <= v.minSize {
		return
	}
	s.markCancellable(v.id)
	s.count("cancel")
	err = s.rpc("NodeGroupDecreaseTargetSize", func(ctx context.Context) error {
		_, err := s.client.NodeGroupDecreaseTargetSize(ctx, &protos.NodeGroupDecreaseTargetSizeRequest{Id: v.id, Delta: -1})
		return err
	})
	s.note("cancel %s target %d by -1 right after a scale-up: %v", v.id, v.target, err)
}

var readyStates = map[string]bool{"active": true, "InService": true, "running": true}

func (s *soaker) markCancellable(groupID string) {
	cloud, _ := s.readCloud()
	for _, g := range cloud {
		if !slices.Contains(g.IDs, groupID) {
			continue
		}
		s.mu.Lock()
		for _, in := range g.Instances {
			if !readyStates[in.State] {
				s.cancellable[in.ProviderID] = true
			}
		}
		s.mu.Unlock()
	}
}

var defaults = &protos.NodeGroupAutoscalingOptions{
	ScaleDownUtilizationThreshold: 0.5, ScaleDownGpuUtilizationThreshold: 0.5,
	ScaleDownUnneededDuration: durationpb.New(10 * time.Minute), ScaleDownUnreadyDuration: durationpb.New(20 * time.Minute),
	MaxNodeProvisionDuration: durationpb.New(15 * time.Minute),
}

// reads runs CA's read RPCs from several callers at once, as its main loop
// and its background instance cache do, with a Refresh in the middle.
func (s *soaker) reads(groups []*protos.NodeGroup) {
	s.count("concurrent-reads")
	// Instances in the snapshot must always be answered from it. Ids the
	// snapshot lacks may cost a cloud lookup (Exoscale), which may fail.
	var ids []string
	managed := map[string]bool{}
	cloud, _ := s.readCloud()
	for _, g := range cloud {
		for _, in := range g.Instances {
			ids = append(ids, in.ProviderID)
		}
	}
	for _, g := range groups {
		v, err := s.view(g)
		if err != nil {
			continue
		}
		for _, in := range v.instances {
			managed[in.GetId()] = true
		}
	}
	ids = append(ids, s.unmanaged...)
	ids = append(ids, s.provider+"://not-ours")
	var wg sync.WaitGroup
	for c := 0; c < s.o.callers; c++ {
		seed := s.rnd.Int63()
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := rand.New(rand.NewSource(seed))
			for i := 0; i < 10; i++ {
				g := groups[rnd.Intn(len(groups))]
				switch rnd.Intn(6) {
				case 0:
					id := ids[rnd.Intn(len(ids))]
					err := s.rpc("NodeGroupForNode", func(ctx context.Context) error {
						_, err := s.client.NodeGroupForNode(ctx, &protos.NodeGroupForNodeRequest{Node: &protos.ExternalGrpcNode{ProviderID: id, Name: "n"}})
						return err
					})
					if err != nil && managed[id] {
						s.violate("NodeGroupForNode(%s) of a snapshot instance failed: %v", id, err)
					}
				case 1:
					_, _ = s.view(g)
				case 2:
					_ = s.rpc("NodeGroupGetOptions", func(ctx context.Context) error {
						_, err := s.client.NodeGroupGetOptions(ctx, &protos.NodeGroupAutoscalingOptionsRequest{Id: g.GetId(), Defaults: defaults})
						return err
					})
				case 3:
					_ = s.rpc("NodeGroupTemplateNodeInfo", func(ctx context.Context) error {
						_, err := s.client.NodeGroupTemplateNodeInfo(ctx, &protos.NodeGroupTemplateNodeInfoRequest{Id: g.GetId()})
						return err
					})
				case 4:
					_ = s.nodeGroups()
				default:
					_ = s.rpc("GPULabel", func(ctx context.Context) error {
						_, err := s.client.GPULabel(ctx, &protos.GPULabelRequest{})
						return err
					})
				}
			}
		}()
	}
	s.refresh()
	wg.Wait()
}

// concurrent races mutations against each other and a Refresh, sometimes on
// one group: the server must serialise them and keep every bound.
func (s *soaker) concurrent(groups []*protos.NodeGroup) {
	s.count("concurrent-mutations")
	g := groups[s.rnd.Intn(len(groups))]
	var wg sync.WaitGroup
	increased := map[string]bool{}
	for c := 0; c < s.o.callers; c++ {
		target := g
		if s.rnd.Intn(3) == 0 {
			target = groups[s.rnd.Intn(len(groups))]
		}
		seed, kind := s.rnd.Int63(), s.rnd.Intn(4)
		if kind <= 1 {
			increased[target.GetId()] = true
			s.mu.Lock()
			s.lastIncrease[target.GetId()] = s.now()
			s.mu.Unlock()
		}
		if kind == 3 && increased[target.GetId()] {
			kind = 2
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch kind {
			case 0, 1:
				s.scaleUp(target, seed, false)
			case 2:
				s.deleteNodes(target, seed)
			default:
				s.decrease(target, seed)
			}
		}()
	}
	s.refresh()
	wg.Wait()
}

// launchOutside makes the cloud launch an instance in a group with room,
// behind the provider's back: check then expects it served within
// servedWithin (unservedChanges).
func (s *soaker) launchOutside() {
	// Room is judged by the cloud's truth as well as by what the provider
	// serves: after a change whose outcome is unknown the served target
	// may lag a size the cloud already took, and another actor launching
	// past max is the workload's doing, not the provider's.
	truth, err := s.state()
	if err != nil {
		return
	}
	desired := map[string]int{}
	for _, g := range truth {
		for _, id := range g.IDs {
			desired[id] = g.Desired
		}
	}
	for _, g := range s.nodeGroups() {
		v, err := s.view(g)
		if err != nil || max(v.target, desired[v.id])+2 > v.maxSize {
			continue
		}
		id, err := s.fake.Launch(v.id)
		if err != nil {
			s.violate("fake cloud: launch in %s: %v", v.id, err)
			return
		}
		s.count("launch-outside")
		s.note("launched %s in %s behind the provider's back", id, v.id)
		s.mu.Lock()
		s.launched[id] = time.Now()
		s.mu.Unlock()
		return
	}
}
