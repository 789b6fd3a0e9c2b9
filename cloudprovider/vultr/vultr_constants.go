package vultr

import "time"

// ProviderName is the name the provider registers under (--cloud-provider=vultr).
const ProviderName = "vultr"

// ProviderIDPrefix starts a Vultr node's providerID: vultr://<instance id>.
const ProviderIDPrefix = "vultr://"

// Node labels.
const (
	// LabelNodeID is set by VKE on every node to its Vultr instance id.
	LabelNodeID = "vke.vultr.com/node-id"
	// LabelNodePool is set by VKE on every node to its pool's label (not id).
	LabelNodePool = "vke.vultr.com/node-pool"
	// LabelBareMetal marks bare-metal nodes.
	LabelBareMetal = "vultr.com/baremetal"
	// LabelGPUType holds the plan's gpu_type on GPU templates. VKE does not set
	// it; as a pool label it lets CA spot a GPU node before its driver is up.
	LabelGPUType = "vke.vultr.com/gpu-type"
)

// EnvAPIKey is the environment variable read when the cloud config has no token.
const EnvAPIKey = "VULTR_API_KEY"

const (
	// vkeMinNodes is VKE's floor: a pool cannot have fewer nodes.
	vkeMinNodes = 1
	// hoursPerMonth is the assumed monthly billing cap; the API does not state it.
	hoursPerMonth = 730
	// planCacheTTL is how long the plan list is trusted.
	planCacheTTL = time.Hour
	// infoRetryInterval spaces re-reads of region and plans after a failure.
	infoRetryInterval = 5 * time.Minute
)

// settingsSource names where per-group settings are read. VKE copies pool
// labels to nodes, so settings use the node-label spelling.
const settingsSource = "node pool labels"
