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

// toolConnections remembers which tool connections were logged, so each
// one is logged once; the set is cleared when it grows large, as connections
// come and go.
var toolConnections = struct {
	sync.Mutex
	seen map[string]bool
}{seen: map[string]bool{}}

// noteTool logs the first RPC of each connection from one of our tools:
// inspect at the default level, as an operator runs it by hand; the probe,
// which a kubelet runs every few seconds, at V(2).
func noteTool(ctx context.Context, method string) {
	tool := ClientOf(ctx)
	if tool == clientCA {
		return
	}
	key := tool
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		key += " " + p.Addr.String()
	}
	toolConnections.Lock()
	if toolConnections.seen[key] {
		toolConnections.Unlock()
		return
	}
	if len(toolConnections.seen) > 1000 {
		toolConnections.seen = map[string]bool{}
	}
	toolConnections.seen[key] = true
	toolConnections.Unlock()
	level := klog.Level(0)
	if tool == "probe" {
		level = 2
	}
	klog.V(level).InfoS("Connection from this binary's "+tool+" command (not a Cluster Autoscaler)", "client", tool, "method", method)
}
