package vultrapi

import (
	"errors"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

// cloudName names Vultr in cloudhttp.APIError.
const cloudName = "vultr"

// IsNotFound reports whether err is a Vultr 404.
func IsNotFound(err error) bool { return errors.Is(err, cloudprovider.ErrNotFound) }
