// Package vultr registers this repository's vultr provider with the Cluster
// Autoscaler's builder as --cloud-provider=vultr; CA's router_vultr.go imports it
// in place of upstream's vultr provider.
package vultr

import (
	"github.com/ca-providers/cluster-autoscaler-provider/intree/adapter"

	// Registers the provider with this repository's registry.
	_ "github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr"
)

func init() { adapter.Register("vultr") }
