package vultr

import "time"

// ProviderName is the name the provider registers under (--cloud-provider=vultr).
const ProviderName = "vultr"

// ProviderIDPrefix starts every Node's spec.providerID on Vultr; the Vultr CCM
// sets it to vultr://<instance id>.
const ProviderIDPrefix = "vultr://"

// Node labels.
const (
	// LabelNodeID is set by VKE on every node to its Vultr instance id.
	LabelNodeID = "vke.vultr.com/node-id"
	// LabelNodePool is set by VKE on every node to its pool's label (not id).
	LabelNodePool = "vke.vultr.com/node-pool"
	// LabelBareMetal marks bare-metal nodes.
	LabelBareMetal = "vultr.com/baremetal"
	// LabelGPUType is the label our templates carry on GPU pools, valued with
	// the plan's gpu_type. VKE does not set it on real nodes; add it as a pool
	// label so CA can tell a GPU node whose driver is not ready yet.
	LabelGPUType = "vke.vultr.com/gpu-type"
)

// EnvAPIKey is the environment variable read when the cloud config has no token.
const EnvAPIKey = "VULTR_API_KEY"

const (
	// vkeMinNodes is VKE's floor: a pool cannot have fewer nodes.
	vkeMinNodes = 1
	// hoursPerMonth is Vultr's monthly billing cap in hours (monthly_cost / 730 = hourly).
	hoursPerMonth = 730
	// planCacheTTL is how long the plan list is trusted.
	planCacheTTL = time.Hour
	// infoRetryInterval bounds re-fetches of the cluster region after a
	// failure, and of the plans after a failure or when a pool names a plan
	// missing from the last list, so a bad plan id costs one list every few
	// minutes, not every loop.
	infoRetryInterval = 5 * time.Minute
)

// settingsSource names where per-group settings are read: VKE puts pool
// labels on the nodes, so they use the node-label spelling (see
// groupconfig.NodeLabelOptionPrefix and docs/group-settings.md).
const settingsSource = "node pool labels"
