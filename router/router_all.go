//go:build !vultr && !volcengine && !exoscale

package router

import (
	_ "github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale"
	_ "github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine"
	_ "github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr"
)
