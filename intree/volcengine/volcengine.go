// Package volcengine registers this repository's volcengine provider with the Cluster
// Autoscaler's builder as --cloud-provider=volcengine; CA's router_volcengine.go imports it
// in place of upstream's volcengine provider.
package volcengine

import (
	"github.com/ca-providers/cluster-autoscaler-provider/intree/adapter"

	// Registers the provider with this repository's registry.
	_ "github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine"
)

func init() { adapter.Register("volcengine") }
