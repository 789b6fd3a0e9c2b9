// Package groupstate is the node-group state the safety rules protect and the
// one discipline for changing it: the mutation guard (MutationGuard, Plan,
// Txn) with its quarantine after an unknown outcome, the size rules a
// change must pass, the refresh gate, the staleness bound, and the lookup of
// nodes a snapshot lacks (UnknownNodeLookup). Providers change a group only
// through it.
package groupstate
