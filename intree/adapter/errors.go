package adapter

import (
	"errors"

	caprovider "k8s.io/autoscaler/cluster-autoscaler/cloudprovider"
	caerrors "k8s.io/autoscaler/cluster-autoscaler/utils/errors"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

// toUpstream is the one place our errors become upstream's: CA compares
// ErrNotImplemented by identity, so ours becomes upstream's; every other
// error becomes an AutoscalerError of the type CA reports it under,
// wrapping ours, so errors.Is on our classes still holds.
func toUpstream(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, cloudprovider.ErrNotImplemented):
		return caprovider.ErrNotImplemented
	case errors.Is(err, cloudprovider.ErrNodeGroupNotFound):
		return caerrors.ToAutoscalerError(caerrors.NodeGroupDoesNotExistError, err)
	case errors.Is(err, cloudprovider.ErrConfig):
		return caerrors.ToAutoscalerError(caerrors.ConfigurationError, err)
	}
	return caerrors.ToAutoscalerError(caerrors.CloudProviderError, err)
}
