package registry

import (
	"context"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
)

// Answers implements the CloudProvider methods every provider answers
// alike (name, GPU label, prices, Cleanup); providers embed it.
type Answers struct {
	// ProviderName is the registered name.
	ProviderName string
	// GPULabelKey is the label whose presence marks a GPU node. It is fixed,
	// since CA caches the answer for the life of its process.
	GPULabelKey string
	// Prices is where the provider's prices come from.
	Prices groupconfig.Prices
}

// Name implements cloudprovider.CloudProvider.
func (a *Answers) Name() string { return a.ProviderName }

// GPULabel implements cloudprovider.CloudProvider.
func (a *Answers) GPULabel(context.Context) (string, error) { return a.GPULabelKey, nil }

// Pricing implements cloudprovider.CloudProvider: the shared pricing model
// over Prices, or ErrNotImplemented when there is no price source.
func (a *Answers) Pricing(context.Context) (cloudprovider.PricingModel, error) {
	return a.Prices.Model()
}

// Cleanup implements cloudprovider.CloudProvider. It keeps all state: CA
// sends Cleanup when it exits and then reconnects to the same server.
func (a *Answers) Cleanup(context.Context) error { return nil }
