package refresh

import (
	"sync"
	"time"
)

// TTLCache holds each entry for ttl after it was put. Entries are dropped
// when read expired and by prune. It is safe for concurrent use.
type TTLCache[K comparable, V any] struct {
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	entries map[K]ttlEntry[V]
}

type ttlEntry[V any] struct {
	v  V
	at time.Time
}

// NewTTLCache returns an empty cache timed by now (nil: time.Now).
func NewTTLCache[K comparable, V any](ttl time.Duration, now func() time.Time) *TTLCache[K, V] {
	if now == nil {
		now = time.Now
	}
	return &TTLCache[K, V]{ttl: ttl, now: now, entries: map[K]ttlEntry[V]{}}
}

func (c *TTLCache[K, V]) get(k K) (V, bool) {
	v, _, ok := c.getAt(k)
	return v, ok
}

func (c *TTLCache[K, V]) getAt(k K) (V, time.Time, bool) {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if ok && now.Sub(e.at) >= c.ttl {
		delete(c.entries, k)
		ok = false
	}
	if !ok {
		var zero V
		return zero, time.Time{}, false
	}
	return e.v, e.at, true
}

func (c *TTLCache[K, V]) put(k K, v V) {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries[k] = ttlEntry[V]{v: v, at: now}
}

// PutIfAbsent stores v under k unless k holds a live entry, and reports
// whether it did; a repeated put does not extend an entry's life.
func (c *TTLCache[K, V]) PutIfAbsent(k K, v V) bool {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[k]; ok && now.Sub(e.at) < c.ttl {
		return false
	}
	c.entries[k] = ttlEntry[V]{v: v, at: now}
	return true
}

func (c *TTLCache[K, V]) drop(k K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, k)
}

func (c *TTLCache[K, V]) prune() {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.entries {
		if now.Sub(e.at) >= c.ttl {
			delete(c.entries, k)
		}
	}
}

// len counts expired entries not yet dropped too.
func (c *TTLCache[K, V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
