package externalgrpc

import (
	"context"
	"strings"
	"sync"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"k8s.io/klog/v2"
)

// ToolUserAgentPrefix starts the gRPC user agent our own tools (inspect,
// probe) send, followed by the tool's name, so the server can tell them from
// a Cluster Autoscaler in its logs and metrics.
const ToolUserAgentPrefix = "cluster-autoscaler-provider-"

// clientCA names any client that is not one of our tools: the Cluster
// Autoscaler sends grpc-go's default user agent.
const clientCA = "cluster-autoscaler"

// ClientOf names the client of an RPC: the tool's name ("inspect",
// "probe") for our own tools, "cluster-autoscaler" otherwise.
func ClientOf(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	for _, ua := range md.Get("user-agent") {
		if rest, ok := strings.CutPrefix(ua, ToolUserAgentPrefix); ok {
			tool, _, _ := strings.Cut(rest, "/")
			if tool, _, _ = strings.Cut(tool, " "); tool != "" {
				return tool
			}
		}
	}
	return clientCA
}

// toolConnections remembers which tool connections were logged, so each is
// logged once. The set is cleared when it grows large, since connections
// come and go. Each interceptor has its own.
type toolConnections struct {
	mu   sync.Mutex
	seen map[string]bool
}

// note logs the first RPC of each connection from one of our tools: inspect
// at the default level, since an operator runs it by hand; the probe, which
// a kubelet runs every few seconds, at V(2).
func (tc *toolConnections) note(ctx context.Context, method string) {
	tool := ClientOf(ctx)
	if tool == clientCA {
		return
	}
	key := tool
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		key += " " + p.Addr.String()
	}
	tc.mu.Lock()
	if tc.seen[key] {
		tc.mu.Unlock()
		return
	}
	if tc.seen == nil || len(tc.seen) > 1000 {
		tc.seen = map[string]bool{}
	}
	tc.seen[key] = true
	tc.mu.Unlock()
	level := klog.Level(0)
	if tool == "probe" {
		level = 2
	}
	klog.V(level).InfoS("Connection from this binary's "+tool+" command (not a Cluster Autoscaler)", "client", tool, "method", method)
}
