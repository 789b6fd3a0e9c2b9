// Package cloudhttp is the HTTP stack every cloud's thin client shares: one
// client (NewHTTPClient) with the call lifetime, the retry rule
// (RetryTransport, RetrySafe), the client-side rate limit (RateLimiter), the
// answer record, and the one reading of a cloud's answer (APIError,
// StatusClass, DecodeJSON), and why a call failed in an operator's terms
// (Diagnose). It knows nothing of node groups: it turns a
// request into an answer or an error that states its class and outcome in
// the terms of package cloudprovider.
package cloudhttp
