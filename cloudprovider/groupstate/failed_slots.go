package groupstate

import (
	"sync"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

// FailedSlot is a place in a group's size the cloud failed to fill (Info
// says why). The group shows it as a failed creation under an id built
// from N, which never repeats, so CA backs off and deletes the slot.
type FailedSlot struct {
	N     int
	Info  *cloudprovider.InstanceErrorInfo
	Since time.Time
	// listed says a listing reports it (set), not a failed operation (add).
	listed bool
}

// failedSlots holds a group's failed slots until CA deletes them or the
// cloud fills them. Volcengine's listings set the count; Exoscale's failed
// operations add slots outside the pool's size, pruned when old.
type failedSlots struct {
	now func() time.Time

	mu    sync.Mutex
	next  int
	slots []FailedSlot
}

func newFailedSlots(now func() time.Time) *failedSlots {
	return &failedSlots{now: now}
}

// set makes the listed slots exactly n: the oldest stay, more are added,
// or the newest dropped because the cloud filled them.
func (f *failedSlots) set(n int, info *cloudprovider.InstanceErrorInfo) {
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	kept := f.slots[:0]
	for _, s := range f.slots {
		if !s.listed {
			kept = append(kept, s)
			continue
		}
		if n > 0 {
			s.Info = info
			kept = append(kept, s)
			n--
		}
	}
	f.slots = kept
	for ; n > 0; n-- {
		f.next++
		f.slots = append(f.slots, FailedSlot{N: f.next, Info: info, Since: now, listed: true})
	}
}

// add records n slots a failed operation was to create.
func (f *failedSlots) add(n int, info *cloudprovider.InstanceErrorInfo) {
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	for ; n > 0; n-- {
		f.next++
		f.slots = append(f.slots, FailedSlot{N: f.next, Info: info, Since: now})
	}
}

// drop ends the slots numbered nums: CA deleted them.
func (f *failedSlots) drop(nums ...int) {
	if len(nums) == 0 {
		return
	}
	drop := make(map[int]bool, len(nums))
	for _, n := range nums {
		drop[n] = true
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	kept := f.slots[:0]
	for _, s := range f.slots {
		if !drop[s.N] {
			kept = append(kept, s)
		}
	}
	f.slots = kept
}

// prune ends the slots of failed operations older than maxAge.
func (f *failedSlots) prune(maxAge time.Duration) {
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	kept := f.slots[:0]
	for _, s := range f.slots {
		if s.listed || now.Sub(s.Since) <= maxAge {
			kept = append(kept, s)
		}
	}
	f.slots = kept
}

func (f *failedSlots) holds(n int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.slots {
		if s.N == n {
			return true
		}
	}
	return false
}

func (f *failedSlots) list() []FailedSlot {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]FailedSlot(nil), f.slots...)
}

func (f *failedSlots) len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.slots)
}
