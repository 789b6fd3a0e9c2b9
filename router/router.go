// Package router selects which cloud providers are compiled into the binary.
//
// Each provider has one file here, router_<name>.go, guarded by the build tag
// <name> and holding only a blank import of the provider package, whose init()
// registers it with registry.RegisterCloudProvider. router_all.go carries
// the negation of every provider tag and imports them all, so:
//
//	go build .                  # every provider
//	go build -tags vultr .      # Vultr only
//	go build -tags "vultr exoscale" .
//
// Adding a provider means adding its router_<name>.go, its import in
// router_all.go and its tag to router_all.go's constraint.
package router
