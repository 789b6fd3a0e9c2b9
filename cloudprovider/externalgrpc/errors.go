package externalgrpc

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

// classification pairs a sentinel with the code CA should see. Order matters:
// the first match wins, so request-shape errors beat cloud errors they wrap.
var classification = []struct {
	err  error
	code codes.Code
}{
	{cloudprovider.ErrNodeGroupNotFound, codes.NotFound},
	{cloudprovider.ErrInvalidArgument, codes.InvalidArgument},
	{cloudprovider.ErrFailedPrecondition, codes.FailedPrecondition},
	{cloudprovider.ErrRateLimited, codes.ResourceExhausted},
	{cloudprovider.ErrQuotaExceeded, codes.ResourceExhausted},
	{cloudprovider.ErrUnauthenticated, codes.Unauthenticated},
	{cloudprovider.ErrPermissionDenied, codes.PermissionDenied},
	{cloudprovider.ErrNotFound, codes.NotFound},
	{cloudprovider.ErrUnavailable, codes.Unavailable},
	// CA should treat a garbled answer as a transport failure: the request
	// may have been applied, and a later retry may succeed.
	{cloudprovider.ErrMalformedResponse, codes.Unavailable},
}

// toStatus maps provider errors to gRPC status codes for every handler.
// optional marks the four RPCs on which CA reads Unimplemented as "not
// implemented"; on the others ErrNotImplemented becomes Internal, because
// Unimplemented there would only confuse operators reading CA's logs.
func toStatus(err error, optional bool) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	case errors.Is(err, cloudprovider.ErrNotImplemented):
		if optional {
			return status.Error(codes.Unimplemented, err.Error())
		}
		return status.Error(codes.Internal, err.Error())
	}
	for _, c := range classification {
		if errors.Is(err, c.err) {
			return status.Error(c.code, err.Error())
		}
	}
	return status.Error(codes.Internal, err.Error())
}
