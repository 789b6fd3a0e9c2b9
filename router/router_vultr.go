//go:build vultr

package router

import _ "github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr"
