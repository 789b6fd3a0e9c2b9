package refresh

import "time"

// DefaultMaxStaleness is the default of --max-staleness, the oldest data
// the server may serve. A refresh that finds a cloud's list unchanged
// reuses its earlier detailed reads until they are this old.
const DefaultMaxStaleness = 60 * time.Second
