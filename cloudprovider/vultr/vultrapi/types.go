package vultrapi

// Cluster is the part of a VKE cluster the provider uses.
type Cluster struct {
	ID      string `json:"id"`
	Label   string `json:"label"`
	Region  string `json:"region"`
	Version string `json:"version"`
	Status  string `json:"status"`
}

// NodePool is a VKE node pool as API v2 returns it.
type NodePool struct {
	ID           string            `json:"id"`
	Label        string            `json:"label"`
	Plan         string            `json:"plan"`
	Status       string            `json:"status"`
	NodeQuantity int               `json:"node_quantity"`
	MinNodes     int               `json:"min_nodes"`
	MaxNodes     int               `json:"max_nodes"`
	AutoScaler   bool              `json:"auto_scaler"`
	Tag          string            `json:"tag"`
	Labels       map[string]string `json:"labels,omitempty"`
	Taints       []Taint           `json:"taints,omitempty"`
	Nodes        []Node            `json:"nodes"`
}

// Taint is a node-pool taint.
type Taint struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Effect string `json:"effect"`
}

// Node is one worker of a node pool. ID is the Vultr instance id, which the
// Vultr CCM puts into the Node's providerID as vultr://<id>.
type Node struct {
	ID          string `json:"id"`
	Label       string `json:"label"`
	DateCreated string `json:"date_created"`
	Status      string `json:"status"`
}

// Plan is a cloud-compute plan (GET /v2/plans).
type Plan struct {
	ID          string   `json:"id"`
	VCPUCount   int      `json:"vcpu_count"`
	RAM         int      `json:"ram"`
	Disk        int      `json:"disk"`
	DiskCount   int      `json:"disk_count"`
	Bandwidth   int      `json:"bandwidth"`
	MonthlyCost float64  `json:"monthly_cost"`
	Type        string   `json:"type"`
	GPUVRAMGB   int      `json:"gpu_vram_gb,omitempty"`
	GPUType     string   `json:"gpu_type,omitempty"`
	Locations   []string `json:"locations"`
}

// MetalPlan is a bare-metal plan (GET /v2/plans-metal).
type MetalPlan struct {
	ID          string   `json:"id"`
	CPUCount    int      `json:"cpu_count"`
	CPUModel    string   `json:"cpu_model"`
	CPUThreads  int      `json:"cpu_threads"`
	RAM         int      `json:"ram"`
	Disk        int      `json:"disk"`
	DiskCount   int      `json:"disk_count"`
	Bandwidth   int      `json:"bandwidth"`
	MonthlyCost float64  `json:"monthly_cost"`
	Type        string   `json:"type"`
	Locations   []string `json:"locations"`
}

// Meta is the pagination block of list responses.
type Meta struct {
	Total int   `json:"total"`
	Links Links `json:"links"`
}

// Links holds the opaque cursors of the neighbouring pages.
type Links struct {
	Next string `json:"next"`
	Prev string `json:"prev"`
}

// ErrorBody is the JSON body Vultr sends with every 4xx/5xx.
type ErrorBody struct {
	Error  string `json:"error"`
	Status int    `json:"status"`
}
