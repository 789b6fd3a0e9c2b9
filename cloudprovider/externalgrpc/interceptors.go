package externalgrpc

import (
	"context"
	"path"
	"runtime/debug"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/metrics"
)

// UnaryInterceptor turns handler panics into codes.Internal (the server keeps
// serving), records request metrics and logs each RPC at V(4).
func UnaryInterceptor(m *metrics.Metrics) grpc.UnaryServerInterceptor {
	tools := &toolConnections{}
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		start := time.Now()
		method := path.Base(info.FullMethod)
		tools.note(ctx, method)
		defer func() {
			if r := recover(); r != nil {
				klog.ErrorS(nil, "Panic in RPC handler", "method", method, "panic", r, "stack", string(debug.Stack()))
				resp, err = nil, status.Errorf(codes.Internal, "internal error in %s", method)
			}
			code := status.Code(err)
			m.ObserveRPC(method, code.String(), time.Since(start))
			if code != codes.OK && code != codes.Unimplemented {
				klog.V(2).InfoS("RPC failed", "method", method, "code", code.String(), "err", err)
			} else {
				klog.V(4).InfoS("RPC", "method", method, "code", code.String(), "duration", time.Since(start))
			}
		}()
		return handler(ctx, req)
	}
}
