// Package externalgrpc serves any cloudprovider.CloudProvider over the gRPC
// protocol of the upstream Cluster Autoscaler's externalgrpc cloud provider.
//
// The server owns the protocol's rules so providers do not have to: one place
// maps errors to status codes, "not ours" answers are OK with an empty group,
// missing templates and options become Unimplemented, panics become Internal,
// and Refresh never outlives CA's deadline.
package externalgrpc
