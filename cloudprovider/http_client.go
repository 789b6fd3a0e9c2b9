package cloudprovider

import (
	"net"
	"net/http"
	"time"
)

// Timeouts for cloud HTTP calls. The per-request context (CA's ~5 s deadline, or
// the refresh budget) is the real bound; these stop a dead peer from pinning a
// connection when a caller forgot one.
const (
	httpDialTimeout           = 5 * time.Second
	httpTLSHandshakeTimeout   = 5 * time.Second
	httpResponseHeaderTimeout = 20 * time.Second
	httpOverallTimeout        = 60 * time.Second
)

// NewHTTPClient returns the client every provider hands to its SDK: its own
// transport (never http.DefaultTransport, which SDKs and libraries may mutate),
// explicit timeouts, no redirects across hosts, proxies only from the standard
// HTTPS_PROXY/NO_PROXY variables, the client-side rate limit and the
// instrumentation from opts. Each call builds its own limiter: a provider
// builds one client, so the budget is per cloud account.
func NewHTTPClient(opts BuildOptions, operation OperationFunc) *http.Client {
	var rt http.RoundTripper = &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: httpDialTimeout, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          32,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   httpTLSHandshakeTimeout,
		ResponseHeaderTimeout: httpResponseHeaderTimeout,
		ExpectContinueTimeout: time.Second,
	}
	if opts.InstrumentTransport != nil {
		rt = opts.InstrumentTransport(rt, operation)
	}
	// Above the instrumentation, so a call refused locally is not counted as
	// a cloud call; below any retrying transport, so every attempt pays.
	if limiter := NewRateLimiter(opts.RateLimit, RateLimiterOptions{
		Now: opts.RateLimitNow, Sleep: opts.RateLimitSleep, Observe: opts.ObserveRateLimit,
	}); limiter != nil {
		rt = &rateLimitTransport{base: rt, limiter: limiter}
	}
	if opts.UserAgent != "" {
		rt = &userAgentTransport{base: rt, userAgent: opts.UserAgent}
	}
	return &http.Client{
		Transport: rt,
		Timeout:   httpOverallTimeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			// A redirect to another host would carry our credentials there.
			if len(via) > 0 && req.URL.Host != via[0].URL.Host {
				return http.ErrUseLastResponse
			}
			if len(via) >= 5 {
				return http.ErrUseLastResponse
			}
			return nil
		},
	}
}

type userAgentTransport struct {
	base      http.RoundTripper
	userAgent string
}

func (t *userAgentTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	// Our name goes first so cloud-side logs show which integration called,
	// whatever the SDK appends.
	ua := t.userAgent
	if sdk := req.Header.Get("User-Agent"); sdk != "" && sdk != ua {
		ua += " " + sdk
	}
	req = req.Clone(req.Context())
	req.Header.Set("User-Agent", ua)
	return t.base.RoundTrip(req)
}
