package groupstate

// The external tests reach the guard through these.

// Guard is a group's mutation guard.
type Guard = mutationGuard

// NewGuard returns a guard outside any ledger.
func NewGuard(group string, opts GuardOptions) *Guard { return newMutationGuard(group, opts) }
