package cloudhttp

import (
	"context"
	"net/http"
	"sync/atomic"
)

// Sends records whether a request made with a context left this process.
// The HTTP stack marks it just before the network transport, so a call
// stopped by our own checks, our rate limit or a build error is known to
// have sent nothing; the mutation guard then treats it as refused.
type Sends struct {
	sent   atomic.Bool
	parent *Sends
}

// Sent reports whether a request made with the context left the process.
func (s *Sends) Sent() bool { return s.sent.Load() }

type sendsKey struct{}

// TrackSends returns ctx carrying a new record of the requests made with
// it. Records further out in ctx are marked too, so nested tracking (a
// mutation, and one call of it) sees every request.
func TrackSends(ctx context.Context) (context.Context, *Sends) {
	parent, _ := ctx.Value(sendsKey{}).(*Sends)
	s := &Sends{parent: parent}
	return context.WithValue(ctx, sendsKey{}, s), s
}

// MarkSent marks every record ctx carries as sent. The HTTP stack calls it
// for each attempt; an in-process fake, which bypasses the stack, calls it
// for each request it receives.
func MarkSent(ctx context.Context) {
	s, _ := ctx.Value(sendsKey{}).(*Sends)
	for ; s != nil; s = s.parent {
		s.sent.Store(true)
	}
}

// sendTransport marks the request's records (MarkSent) as it leaves for
// the network.
type sendTransport struct {
	base http.RoundTripper
}

func (t *sendTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	MarkSent(req.Context())
	return t.base.RoundTrip(req)
}
