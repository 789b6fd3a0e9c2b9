package vultrapi

// API paths, relative to the configured base URL. Vultr's paths carry the
// version themselves, so the base is the bare host (https://api.vultr.com).
const (
	// PathPrefix is the version prefix of every API v2 path.
	PathPrefix = "/v2"
	// PathCluster is one VKE cluster: GET returns {"vke_cluster": {...}}.
	PathCluster = PathPrefix + "/kubernetes/clusters/%s"
	// PathNodePools lists a cluster's node pools: {"node_pools": [...], "meta": {...}}.
	PathNodePools = PathPrefix + "/kubernetes/clusters/%s/node-pools"
	// PathNodePool is one node pool: GET and PATCH answer {"node_pool": {...}}.
	PathNodePool = PathPrefix + "/kubernetes/clusters/%s/node-pools/%s"
	// PathNodePoolNode is one node of a pool: DELETE answers 204.
	PathNodePoolNode = PathPrefix + "/kubernetes/clusters/%s/node-pools/%s/nodes/%s"
	// PathPlans lists cloud-compute plans: {"plans": [...], "meta": {...}}.
	PathPlans = PathPrefix + "/plans"
	// PathMetalPlans lists bare-metal plans: {"plans_metal": [...], "meta": {...}}.
	PathMetalPlans = PathPrefix + "/plans-metal"
)

// DefaultBaseURL is Vultr's public API endpoint.
const DefaultBaseURL = "https://api.vultr.com"

// Pagination parameters. Vultr pages with an opaque cursor taken from
// meta.links.next; an empty next marks the last page.
const (
	// QueryPerPage is the page-size query parameter.
	QueryPerPage = "per_page"
	// QueryCursor is the cursor query parameter.
	QueryCursor = "cursor"
	// MaxPerPage is the largest page Vultr serves.
	MaxPerPage = 500
)

// ContentTypeJSON is the exact content type Vultr sends and expects.
const ContentTypeJSON = "application/json"

// staticSegments are the path segments that are not ids; every other segment
// is replaced by {id} in metrics operation names so label cardinality stays bounded.
var staticSegments = map[string]bool{
	"v2": true, "kubernetes": true, "clusters": true, "node-pools": true, "nodes": true,
	"labels": true, "taints": true, "plans": true, "plans-metal": true, "recycle": true,
}
