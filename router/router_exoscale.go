//go:build exoscale

package router

import _ "github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale"
