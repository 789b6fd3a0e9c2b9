package groupstate

import "time"

// DefaultMaxStaleness is the default of --max-staleness: the oldest data the
// server may serve. A refresh that finds nothing changed in what each
// cloud's one list call returns reuses the previous, more detailed reads
// (instance listings, per-instance states) until they are this old.
const DefaultMaxStaleness = 60 * time.Second
