package groupstate

import (
	"sync"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

// FailedSlot is one place in a group's size the cloud failed to fill with
// an instance. A provider reports it as an instance in the creating state
// with its error info (cloudprovider.FailedCreation), under an id it builds
// from N, so that CA sees the failure, backs the group off and deletes the
// slot.
type FailedSlot struct {
	// N numbers the slot within its group; it never repeats, so an id
	// built from it names one slot for as long as the group is managed.
	N int
	// Info says why the cloud failed to fill it.
	Info *cloudprovider.InstanceErrorInfo
	// Since is when the slot was first reported.
	Since time.Time
	// listed is a slot a listing reports (Set), as opposed to one a failed
	// operation reports (Add).
	listed bool
}

// FailedSlots is the one rule for a slot the cloud failed to fill: it shows
// as a failed creation until CA deletes it (Drop) or the cloud fills it. A
// cloud reports failed slots in one of two ways, and each provider uses the
// one its cloud has:
//
//   - its listing shows fewer instances than the desired number it keeps
//     with a failed scaling activity (Volcengine): the slots are inside the
//     cloud's size, and each listing sets how many there are (Set), which
//     is how the cloud filling one ends it;
//   - an operation that was to raise the size failed (Exoscale): the slots
//     are outside the cloud's size, which never counted them; they are added
//     once (Add) and end when CA deletes them, or when older than the bound
//     the provider prunes with (Prune), should CA never do so.
//
// It is safe for concurrent use.
type FailedSlots struct {
	now func() time.Time

	mu    sync.Mutex
	next  int
	slots []FailedSlot
}

func newFailedSlots(now func() time.Time) *FailedSlots {
	return &FailedSlots{now: now}
}

// Set makes the slots a listing reports exactly n, failed because of info:
// the oldest n of those reported before stay (with their numbers and
// times; info updates them); more are added, or the newest dropped, since
// the cloud filled them.
func (f *FailedSlots) Set(n int, info *cloudprovider.InstanceErrorInfo) {
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

// Add records n slots outside the cloud's size that a failed operation
// was to create, failed because of info.
func (f *FailedSlots) Add(n int, info *cloudprovider.InstanceErrorInfo) {
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	for ; n > 0; n-- {
		f.next++
		f.slots = append(f.slots, FailedSlot{N: f.next, Info: info, Since: now})
	}
}

// Drop ends the slots numbered nums: CA deleted them.
func (f *FailedSlots) Drop(nums ...int) {
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

// Prune ends the slots added by a failed operation (Add) that are older
// than maxAge.
func (f *FailedSlots) Prune(maxAge time.Duration) {
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

// Holds reports whether slot n is still failed.
func (f *FailedSlots) Holds(n int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.slots {
		if s.N == n {
			return true
		}
	}
	return false
}

// List returns the failed slots, oldest first.
func (f *FailedSlots) List() []FailedSlot {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]FailedSlot(nil), f.slots...)
}

// Len is the number of failed slots.
func (f *FailedSlots) Len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.slots)
}
