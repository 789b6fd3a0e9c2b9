// Package fakecloud is what every fake cloud API is built on: the fault
// queue (Fault), the request recorder, the loopback HTTP server (API) and a
// clock that moves only when told to (ManualClock).
//
// The fakes are product code, not test code: --simulate serves them from the
// production binary, and the bench, the soak and the tests share them. So
// this package imports neither testing nor net/http/httptest, and what a fake
// records stays bounded however long it runs. The conformance kit, which does
// need testing, lives in cloudprovidertest.
package fakecloud
