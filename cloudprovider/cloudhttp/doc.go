// Package cloudhttp is the HTTP stack every cloud's thin client shares: the
// client (NewHTTPClient) with the call lifetime, retries (RetryTransport,
// RetrySafe), the client-side rate limit (RateLimiter) and the answer
// record; the reading of a cloud's answer (APIError, StatusClass,
// DecodeJSON); and why a call failed, for an operator (Diagnose). It knows
// nothing of node groups: it turns a request into an answer, or an error
// with a cloudprovider class and outcome.
package cloudhttp
