// Package externalgrpc serves any cloudprovider.CloudProvider over the gRPC
// protocol of the upstream Cluster Autoscaler's externalgrpc cloud provider.
//
// The server owns the protocol's rules so providers do not have to: one place
// maps errors to status codes, "not ours" answers are OK with an empty group,
// missing templates and options become Unimplemented, panics become Internal,
// and Refresh never outlives CA's deadline.
//
// It serves both generations of the protocol (CA 1.34.1 and older read and
// write Kubernetes-typed fields that CA 1.35 replaced): every answer carries
// both, and requests are read from the current fields first, then the legacy
// ones (generations.go). Nothing is configured per CA version.
package externalgrpc
