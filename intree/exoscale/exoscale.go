// Package exoscale registers this repository's exoscale provider with the Cluster
// Autoscaler's builder as --cloud-provider=exoscale; CA's router_exoscale.go imports it
// in place of upstream's exoscale provider.
package exoscale

import (
	"github.com/ca-providers/cluster-autoscaler-provider/intree/adapter"

	// Registers the provider with this repository's registry.
	_ "github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale"
)

func init() { adapter.Register("exoscale") }
