// Package volcengine is the Cluster Autoscaler provider for Volcengine (火山引擎)
// Auto Scaling groups, chosen with --nodes min:max:<scaling group id> or by tag
// with --node-group-auto-discovery=asg:tag=<key>[=<value>]. Reads come from a
// snapshot taken at Refresh; mutations set the desired number
// (ModifyScalingGroup) or call RemoveInstances and return once accepted.
package volcengine

import "time"

// ProviderName is the name the provider registers under.
const ProviderName = "volcengine"

// ProviderIDPrefix starts every Volcengine node's spec.providerID; the rest is
// the ECS instance id ("volcengine://i-ybqzudcktgkdvbnfzcul").
const ProviderIDPrefix = "volcengine://"

// Configuration defaults and environment variables (the names upstream uses).
const (
	// DefaultEndpoint is the OpenAPI gateway that serves every region.
	DefaultEndpoint = "open.volcengineapi.com"

	envRegion    = "REGION_ID"
	envAccessKey = "ACCESS_KEY"
	envSecretKey = "SECRET_KEY"
	envEndpoint  = "ENDPOINT"
)

// Node labels set on template nodes.
const (
	// LabelScalingGroup names the group, for CA's balancing and for humans.
	LabelScalingGroup = "volcengine.com/scaling-group-id"
	// GPULabel marks a GPU node; its value is the GPU model with spaces
	// replaced ("NVIDIA-A10"). Real nodes carry it only if the cluster sets it.
	GPULabel = "volcengine.com/gpu-model"
)

// Auto-discovery spec syntax: asg:tag=<key>[=<value>][,<key>[=<value>]...].
const (
	discoveryPrefix = "asg:"
	discoveryTag    = "tag="
)

const (
	// refreshParallelism bounds concurrent DescribeScalingInstances calls.
	refreshParallelism = 8
	// templateTTL is how long template inputs are reused, so a steady-state
	// Refresh makes no template call.
	templateTTL = 30 * time.Minute
	// templateRetry is how soon a failed template fetch is tried again.
	templateRetry = time.Minute
)

// settingsSource is where per-group settings are read (docs/group-settings.md).
const settingsSource = "scaling-group tags"
