// Package volcengine is the Cluster Autoscaler provider for Volcengine (火山引擎)
// Auto Scaling groups, served to the upstream CA through externalgrpc.
//
// Node groups are scaling groups, chosen with --nodes min:max:<scaling group id>
// or discovered by tags with --node-group-auto-discovery=asg:tag=<key>[=<value>].
// Every read is served from a snapshot taken at Refresh (DescribeScalingGroups,
// one page in rotation when the list is long, and DescribeScalingInstances
// for the groups that changed; see groupCatalog and groupListing);
// mutations go through ModifyScalingGroup's desired number and RemoveInstances
// and return as soon as the API accepts them.
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

// Node labels set on template nodes (well-known ones are corev1's).
const (
	// LabelScalingGroup names the scaling group on template nodes, so that
	// CA's similar-group balancing and humans can tell groups apart.
	LabelScalingGroup = "volcengine.com/scaling-group-id"
	// GPULabel is the label whose presence marks a GPU node; its value is the
	// GPU model with spaces replaced ("NVIDIA-A10"). Real nodes carry it only if
	// the cluster labels them so (see docs/providers/volcengine.md).
	GPULabel = "volcengine.com/gpu-model"
)

// Auto-discovery spec syntax: asg:tag=<key>[=<value>][,<key>[=<value>]...].
const (
	discoveryPrefix = "asg:"
	discoveryTag    = "tag="
)

// Tuning.
const (
	// refreshParallelism bounds concurrent DescribeScalingInstances calls.
	refreshParallelism = 8
	// templateTTL is how long fetched template inputs (configuration, instance
	// type, subnet zones, image) are reused before being fetched again, so that
	// a steady-state Refresh costs only 1 + G calls.
	templateTTL = 30 * time.Minute
	// templateRetry is how soon a failed template fetch is tried again.
	templateRetry = time.Minute
)

// settingsSource names where per-group settings are read: the scaling
// group's tags, in the AWS spelling (docs/group-settings.md).
const settingsSource = "scaling-group tags"
