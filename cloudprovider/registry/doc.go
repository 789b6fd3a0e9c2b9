// Package registry is where providers register (RegisterCloudProvider, from
// init) and what main hands a provider's builder (BuildOptions). It sits
// above every other shared package because BuildOptions carries their
// options (the HTTP client's, the price sheet, the staleness bound); only
// provider packages and main import it.
package registry
