package cloudhttp

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"syscall"
)

// FailureKind is why a cloud call failed, in the operator's terms.
type FailureKind int

// The kinds Diagnose tells apart.
const (
	// FailureOther is anything else: the provider's own error.
	FailureOther FailureKind = iota
	// FailureDNS: the API host does not resolve.
	FailureDNS
	// FailureRefused: nothing accepts connections at the API address.
	FailureRefused
	// FailureTLS: the TLS handshake or the server's certificate failed.
	FailureTLS
	// FailureTimeout: no answer within the deadline.
	FailureTimeout
	// FailureProxy: the proxy from HTTPS_PROXY/HTTP_PROXY failed.
	FailureProxy
	// FailureNoAnswer: no answer for another network reason (a reset).
	FailureNoAnswer
	// FailureUnauthenticated: HTTP 401, the credentials were refused.
	FailureUnauthenticated
	// FailurePermission: HTTP 403, the key lacks a permission.
	FailurePermission
	// FailureNotFound: HTTP 404, the cloud does not know the resource.
	FailureNotFound
	// FailureStatus: another HTTP error answer.
	FailureStatus
)

// Failure is a failed call as Diagnose reads it.
type Failure struct {
	Kind FailureKind
	// Operation is the APIError's operation ("" when the error has none).
	Operation string
	// Status, Code and Message are the cloud's answer (Status 0: none).
	Status  int
	Code    string
	Message string
	// Host is the host that failed: the name that did not resolve, the
	// address that refused, the request's host, or the proxy's.
	Host string
	// Cause is the innermost network error (a *net.DNSError, an x509
	// error, ...); nil for an answer.
	Cause error
}

// Network reports whether the call got no answer at all.
func (f Failure) Network() bool {
	switch f.Kind {
	case FailureDNS, FailureRefused, FailureTLS, FailureTimeout, FailureProxy, FailureNoAnswer:
		return true
	}
	return false
}

// Answer renders the cloud's answer: "HTTP 403 AccessDenied: not allowed".
func (f Failure) Answer() string {
	s := fmt.Sprintf("HTTP %d", f.Status)
	if f.Code != "" {
		s += " " + f.Code
	}
	if f.Message != "" {
		s += ": " + f.Message
	}
	return s
}

// ProxyFunc says which proxy a request to u goes through (nil: none).
type ProxyFunc func(u *url.URL) (*url.URL, error)

// EnvironmentProxy is the proxy NewHTTPClient's transport uses, from
// HTTPS_PROXY, HTTP_PROXY and NO_PROXY.
func EnvironmentProxy(u *url.URL) (*url.URL, error) {
	return http.ProxyFromEnvironment(&http.Request{URL: u})
}

// Diagnose classifies a failed call's error the same way for every cloud:
// an answer by its status, no answer by the network error in its chain
// (through Unwrap and the SDKs' OrigErr). proxy is the proxy rule the
// client used (nil: EnvironmentProxy). A call without an answer that went
// through a proxy is a proxy failure, unless TLS failed: that is the
// cloud's certificate, seen through the tunnel.
func Diagnose(err error, proxy ProxyFunc) Failure {
	if proxy == nil {
		proxy = EnvironmentProxy
	}
	var f Failure
	var api *APIError
	if errors.As(err, &api) {
		f.Operation = api.Operation
		if api.Status != 0 {
			f.Status, f.Code, f.Message = api.Status, api.Code, api.Message
			switch api.Status {
			case http.StatusUnauthorized:
				f.Kind = FailureUnauthenticated
			case http.StatusForbidden:
				f.Kind = FailurePermission
			case http.StatusNotFound:
				f.Kind = FailureNotFound
			default:
				f.Kind = FailureStatus
			}
			return f
		}
		f.Kind = FailureNoAnswer
	}
	var requestURL *url.URL
	walk(err, func(e error) bool {
		switch e := e.(type) {
		case *url.Error:
			if u, perr := url.Parse(e.URL); perr == nil && requestURL == nil {
				requestURL = u
				f.Host = u.Host
			}
			// A timeout is named where it happened, below.
			return false
		case *APIError:
			return false
		case *net.DNSError:
			f.Kind, f.Host, f.Cause = FailureDNS, e.Name, e
			return true
		case *net.OpError:
			if e.Op == "proxyconnect" {
				// The dial to the proxy carries the proxy's address.
				f.Kind, f.Cause = FailureProxy, e
				var dial *net.OpError
				if errors.As(e.Err, &dial) && dial.Addr != nil {
					f.Host = dial.Addr.String()
				}
				return true
			}
			if errors.Is(e.Err, syscall.ECONNREFUSED) {
				f.Kind, f.Cause = FailureRefused, e
				if e.Addr != nil {
					f.Host = e.Addr.String()
				}
				return true
			}
		case *tls.CertificateVerificationError, x509.UnknownAuthorityError, x509.HostnameError,
			x509.CertificateInvalidError, tls.RecordHeaderError, tls.AlertError:
			f.Kind, f.Cause = FailureTLS, e
			return true
		}
		// The innermost timeout wins: the walk goes on, and a deeper one
		// replaces a wrapper's.
		var ne net.Error
		if errors.Is(e, context.DeadlineExceeded) || (errors.As(e, &ne) && ne.Timeout()) {
			f.Kind, f.Cause = FailureTimeout, e
		}
		return false
	})
	if requestURL != nil && f.Network() && f.Kind != FailureTLS && f.Kind != FailureProxy {
		if p, perr := proxy(requestURL); perr == nil && p != nil {
			f.Kind, f.Host = FailureProxy, p.Host
			if f.Cause == nil {
				f.Cause = err
			}
		}
	}
	if f.Kind == FailureNoAnswer && f.Cause == nil && api != nil {
		f.Cause = api.Cause
	}
	return f
}

// walk visits err and every error it wraps (Unwrap, Unwrap []error and the
// SDKs' OrigErr), depth first, until visit returns true.
func walk(err error, visit func(error) bool) bool {
	for depth := 0; err != nil && depth < 32; depth++ {
		if visit(err) {
			return true
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if walk(e, visit) {
					return true
				}
			}
			return false
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ OrigErr() error }:
			err = u.OrigErr()
		default:
			return false
		}
	}
	return false
}

// TransportCause returns the network error inside an SDK's error, with the
// request's URL cut to its scheme and host (a query may carry ids and
// signatures). Thin clients keep it as an APIError's Cause for a call
// without an answer. It is nil when err holds no *url.Error.
func TransportCause(err error) error {
	var found *url.Error
	walk(err, func(e error) bool {
		if ue, ok := e.(*url.Error); ok {
			found = ue
			return true
		}
		return false
	})
	if found == nil {
		return nil
	}
	short := *found
	if u, perr := url.Parse(found.URL); perr == nil {
		short.URL = (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
	} else {
		short.URL = ""
	}
	return &short
}
