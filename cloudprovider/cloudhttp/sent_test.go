package cloudhttp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestTrackSendsSeesOnlyRequestsThatLeave(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(srv.Close)
	refuse := errors.New("budget spent")
	c := NewHTTPClient(ClientOptions{
		RateLimit:      RateLimit{Rate: 1, Burst: 1},
		RateLimitNow:   func() time.Time { return time.Unix(0, 0) },
		RateLimitSleep: func(context.Context, time.Duration) error { return refuse },
	}, HTTPStack{Cloud: "c"})
	do := func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodDelete, srv.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}

	outer, mutation := TrackSends(context.Background())
	ctx, first := TrackSends(outer)
	if err := do(ctx); err != nil {
		t.Fatal(err)
	}
	if !first.Sent() || !mutation.Sent() {
		t.Fatalf("a request that reached the cloud: sent %v, enclosing record %v; want both marked", first.Sent(), mutation.Sent())
	}
	ctx, second := TrackSends(context.Background())
	if err := do(ctx); err == nil {
		t.Fatal("the spent budget let a second request through")
	}
	if second.Sent() {
		t.Fatal("a request our rate limit refused is marked as sent")
	}
}

func TestMarkSentWithoutRecordIsHarmless(t *testing.T) {
	t.Parallel()
	MarkSent(context.Background())
	ctx, s := TrackSends(context.Background())
	if s.Sent() {
		t.Fatal("a new record is marked")
	}
	MarkSent(ctx)
	if !s.Sent() {
		t.Fatal("MarkSent did not mark the context's record")
	}
}
