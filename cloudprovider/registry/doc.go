// Package registry is where providers register (RegisterCloudProvider, from
// init) and what main passes to a provider's builder (BuildOptions). It
// imports the other shared packages, since BuildOptions carries their
// options (the HTTP client's, the price sheet, the staleness bound); only
// provider packages and main import it.
package registry
