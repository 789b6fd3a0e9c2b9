// Package groupstate is the node-group state providers serve and the one
// way to change it. A provider's node group embeds a Group; a Ledger holds
// every group's guard and orders our changes against listings; Groups is
// the set a refresh serves. A change is a Plan run by Group.Do or
// Group.Transact, and its Effect is applied only when the cloud applied it.
package groupstate
