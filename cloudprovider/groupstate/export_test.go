package groupstate

import "context"

// The external tests reach the guard and the lookup through these.

// Guard is a group's mutation guard.
type Guard = mutationGuard

// NewGuard returns a guard outside any ledger.
func NewGuard(group string, opts GuardOptions) *Guard { return newMutationGuard(group, opts) }

// LookupMargin is lookupMargin.
const LookupMargin = lookupMargin

// ResolveUnknownNode is resolveUnknownNode.
func ResolveUnknownNode[G comparable](ctx context.Context, u *UnknownNodeLookup, id string, index func(id string) (g G, known bool)) G {
	return resolveUnknownNode(ctx, u, id, index)
}
