package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
	"github.com/ca-providers/cluster-autoscaler-provider/hack/bench/cluster"
)

// hotSizes are the cluster shapes of the hot-path benchmarks: the smallest
// and the largest of the table.
var hotSizes = []struct{ nodes, groups int }{{100, 3}, {5000, 100}}

// setup seeds a fake, builds the provider in-process and takes one snapshot.
func setup(b *testing.B, provider string, nodes, groups int) (*cluster.Fake, cloudprovider.CloudProvider, *externalgrpc.Server) {
	b.Helper()
	ctx := context.Background()
	fake, err := cluster.Start(cluster.Options{Provider: provider, Nodes: nodes, Groups: groups, Unmanaged: 3, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(fake.Close)
	for k, v := range fake.Env {
		b.Setenv(k, v)
	}
	p, err := fake.Build(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.Cleanup(ctx) })
	srv := externalgrpc.NewServer(p, externalgrpc.Options{})
	if err := srv.RefreshOnce(ctx); err != nil {
		b.Fatal(err)
	}
	return fake, p, srv
}

// nodeRequests returns a NodeGroupForNode request per instance, plus the
// unmanaged nodes.
func nodeRequests(b *testing.B, p cloudprovider.CloudProvider, unmanaged []string) []*protos.NodeGroupForNodeRequest {
	b.Helper()
	ctx := context.Background()
	groups, err := p.NodeGroups(ctx)
	if err != nil {
		b.Fatal(err)
	}
	var reqs []*protos.NodeGroupForNodeRequest
	for _, g := range groups {
		ins, err := g.Nodes(ctx)
		if err != nil {
			b.Fatal(err)
		}
		for i, in := range ins {
			reqs = append(reqs, &protos.NodeGroupForNodeRequest{Node: kubeNode(fmt.Sprintf("n-%d", i), in.Id)})
		}
	}
	for i, id := range unmanaged {
		reqs = append(reqs, &protos.NodeGroupForNodeRequest{Node: kubeNode(fmt.Sprintf("cp-%d", i), id)})
	}
	return reqs
}

// BenchmarkNodeGroupForNode times the gRPC handler (request to response
// message, no transport) cycling over every node of the cluster.
func BenchmarkNodeGroupForNode(b *testing.B) {
	for _, provider := range cluster.Providers {
		for _, sz := range hotSizes {
			b.Run(fmt.Sprintf("%s/N=%d/G=%d", provider, sz.nodes, sz.groups), func(b *testing.B) {
				fake, p, srv := setup(b, provider, sz.nodes, sz.groups)
				reqs := nodeRequests(b, p, fake.Unmanaged)
				ctx := context.Background()
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := srv.NodeGroupForNode(ctx, reqs[i%len(reqs)]); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkSnapshotRebuild times one provider Refresh: the cloud list calls
// against the fake over loopback HTTP, decoding, and the snapshot rebuild.
func BenchmarkSnapshotRebuild(b *testing.B) {
	for _, provider := range cluster.Providers {
		for _, sz := range hotSizes {
			b.Run(fmt.Sprintf("%s/N=%d/G=%d", provider, sz.nodes, sz.groups), func(b *testing.B) {
				_, p, _ := setup(b, provider, sz.nodes, sz.groups)
				ctx := context.Background()
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := p.Refresh(ctx); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkGetOptions times the busiest uncached RPC's handler.
func BenchmarkGetOptions(b *testing.B) {
	for _, provider := range cluster.Providers {
		b.Run(fmt.Sprintf("%s/N=5000/G=100", provider), func(b *testing.B) {
			_, p, srv := setup(b, provider, 5000, 100)
			ctx := context.Background()
			groups, err := p.NodeGroups(ctx)
			if err != nil {
				b.Fatal(err)
			}
			reqs := make([]*protos.NodeGroupAutoscalingOptionsRequest, 0, len(groups))
			for _, g := range groups {
				reqs = append(reqs, &protos.NodeGroupAutoscalingOptionsRequest{Id: g.Id(ctx), Defaults: &protos.NodeGroupAutoscalingOptions{}})
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				// Unimplemented ("no overrides") is the expected answer.
				_, _ = srv.NodeGroupGetOptions(ctx, reqs[i%len(reqs)])
			}
		})
	}
}
