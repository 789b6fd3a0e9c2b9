// Package groupconfig parses and validates, for every provider, what the
// operator sets for node groups: the --nodes specs and their matching
// against the listed groups (SpecWatch), per-group settings in the cloud's
// labels or tags (GroupSettings: autoscaling options and template hints),
// the template node built from them, and prices (PriceCatalog, PriceSheet).
// It holds no cloud state and makes no cloud call.
package groupconfig
