// Package externalgrpc serves any cloudprovider.CloudProvider over the gRPC
// protocol of the upstream Cluster Autoscaler's externalgrpc cloud provider.
//
// The server applies the protocol's rules so providers do not have to: it
// maps errors to status codes, answers "not ours" with OK and an empty
// group, turns missing templates and options into Unimplemented and panics
// into Internal, and never lets Refresh outlive CA's deadline.
//
// It serves both generations of the protocol (CA 1.34.1 and older read and
// write Kubernetes-typed fields that CA 1.35 replaced): every answer carries
// both, and requests are read from the current fields first, then the legacy
// ones (generations.go). Nothing is configured per CA version.
package externalgrpc
