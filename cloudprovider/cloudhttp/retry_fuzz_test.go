package cloudhttp

import (
	"net/http"
	"testing"
	"time"
)

// FuzzRetryAfter checks the Retry-After parser never returns a negative wait
// and falls back to the default on garbage.
func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"", "0", "1", "120", "-5", "Wed, 21 Oct 2015 07:28:00 GMT", "soon", "99999999999999999999", "1.5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		h := http.Header{}
		h.Set("Retry-After", v)
		const def = 7 * time.Second
		got := RetryAfter(h, def)
		if got < 0 {
			t.Fatalf("Retry-After %q gave a negative wait %s", v, got)
		}
	})
}
