// Package groupconfig is what the operator says about node groups, parsed
// and validated once for every provider: the --nodes specs and their
// resolution against the listed groups (SpecWatch), per-group settings
// carried on the cloud's labels or tags (GroupSettings: autoscaling options
// and template hints), the template node built from them, and the prices
// (PriceCatalog, PriceSheet). It holds no cloud state and makes no call.
package groupconfig
