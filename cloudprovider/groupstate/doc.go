// Package groupstate is the node-group state the safety rules protect and the
// one discipline for changing it: a group's served state (Group, View) and
// the provider's set of groups (Groups); the ledger of our mutations
// (Ledger) that orders them against listings, with each group's deleting
// set (DeletingSet) and failed slots (FailedSlots); the mutation guard
// (MutationGuard, Plan, Txn) with its quarantine after an unknown outcome;
// the size rules a change must pass; the refresh gate; which read is due
// (Freshness, the staleness bound) and the small cache of enrichment data
// (TTLCache); and the lookup of nodes a snapshot lacks (UnknownNodeLookup).
// Providers change a group only through it.
package groupstate
