package refresh

import "context"

// The external tests reach the lookup through these.

// LookupMargin is lookupMargin.
const LookupMargin = lookupMargin

// ResolveUnknownNode is resolveUnknownNode.
func ResolveUnknownNode[G comparable](ctx context.Context, u *UnknownNodeLookup, id string, index func(id string) (g G, known bool)) G {
	return resolveUnknownNode(ctx, u, id, index)
}
