package apispec

// Vultr loads Vultr's API v2 description (last changed 2023-12).
func Vultr() (*Spec, error) {
	data, err := descriptions.ReadFile("testdata/vultr-openapi.json")
	if err != nil {
		return nil, err
	}
	return LoadOpenAPI("vultr-openapi.json", data, Options{
		BasePath:   "/v2",
		Allowances: vultrAllowances(),
		Operations: vultrOperations(),
		// The description lists 400, 401 and 404 without a body and no
		// other error status. A Vultr error is {"error": "...",
		// "status": N} (govultr v3.34.0 govultr.go, apiError).
		Errors: ErrorBody{
			Schema: `{"type": "object", "required": ["error", "status"], "properties": {"error": {"type": "string"}, "status": {"type": "integer"}}}`,
			Source: "govultr v3.34.0 govultr.go (apiError)",
		},
	})
}

// vultrAllowances are where the live API is ahead of the description, each
// seen in govultr v3.34.0, the Go SDK Vultr maintains for the live API.
func vultrAllowances() []Allowance {
	const govultrNodePool = "govultr v3.34.0 kubernetes.go (NodePool, NodePoolReqUpdate: labels, taints)"
	taints := `{"type": "array", "items": {"type": "object", "required": ["key", "effect"], "properties": {
		"key": {"type": "string"}, "value": {"type": "string"},
		"effect": {"type": "string", "enum": ["NoSchedule", "PreferNoSchedule", "NoExecute"]}}}}`
	labels := `{"type": "object", "additionalProperties": {"type": "string"}}`
	return []Allowance{
		// Node-pool labels and taints came after the description's last
		// change (2023-12). The nodepools schema is shared by every
		// answer carrying a pool, so one entry each covers them all.
		{Operation: "get-nodepools", Status: "200", Path: []string{"node_pools", "[]", "labels"}, Schema: labels, Source: govultrNodePool},
		{Operation: "get-nodepools", Status: "200", Path: []string{"node_pools", "[]", "taints"}, Schema: taints, Source: govultrNodePool},
		// govultr's NodePool also carries user_data and vpc_only.
		{Operation: "get-nodepools", Status: "200", Path: []string{"node_pools", "[]", "user_data"}, Schema: `{"type": "string"}`, Source: "govultr v3.34.0 kubernetes.go (NodePool.UserData)"},
		{Operation: "get-nodepools", Status: "200", Path: []string{"node_pools", "[]", "vpc_only"}, Schema: `{"type": "boolean"}`, Source: "govultr v3.34.0 kubernetes.go (NodePool.VPCOnly)"},
		// A pool's node has a status (the description's own examples show
		// it; the schema lacks it) and its addresses.
		{Operation: "get-nodepools", Status: "200", Path: []string{"node_pools", "[]", "nodes", "[]", "status"}, Schema: `{"type": "string"}`, Source: "the description's nodepool-instances example; govultr v3.34.0 kubernetes.go (Node.Status)"},
		{Operation: "get-nodepools", Status: "200", Path: []string{"node_pools", "[]", "nodes", "[]", "ip"}, Schema: `{"type": "string"}`, Source: "govultr v3.34.0 kubernetes.go (Node.IP)"},
		{Operation: "get-nodepools", Status: "200", Path: []string{"node_pools", "[]", "nodes", "[]", "private_ip"}, Schema: `{"type": "string"}`, Source: "govultr v3.34.0 kubernetes.go (Node.PrivateIP)"},
		// The node-pool list pages like every other list: per_page and
		// cursor in, meta out (govultr's ListNodePools sends ListOptions
		// and reads vkeNodePoolsBase.Meta); the description's other lists
		// declare the same.
		{Operation: "get-nodepools", Query: "per_page", Schema: `{"type": "integer"}`, Source: "govultr v3.34.0 kubernetes.go (ListNodePools, ListOptions)"},
		{Operation: "get-nodepools", Query: "cursor", Schema: `{"type": "string"}`, Source: "govultr v3.34.0 kubernetes.go (ListNodePools, ListOptions)"},
		{Operation: "get-nodepools", Status: "200", Path: []string{"meta"}, Component: "meta", Source: "govultr v3.34.0 kubernetes.go (vkeNodePoolsBase.Meta)"},
		// GPU plans carry their GPU (govultr's Plan.GPUVRAM, Plan.GPUType).
		{Operation: "list-plans", Status: "200", Path: []string{"plans", "[]", "gpu_vram_gb"}, Schema: `{"type": "integer"}`, Source: "govultr v3.34.0 plan.go (Plan.GPUVRAM)"},
		{Operation: "list-plans", Status: "200", Path: []string{"plans", "[]", "gpu_type"}, Schema: `{"type": "string"}`, Source: "govultr v3.34.0 plan.go (Plan.GPUType)"},
		// Prices have cents (govultr reads float32: Plan.MonthlyCost,
		// BareMetalPlan.MonthlyCost); the description says integer.
		{Operation: "list-plans", Status: "200", Path: []string{"plans", "[]", "monthly_cost"}, Replace: true, Schema: `{"type": "number"}`, Source: "govultr v3.34.0 plan.go (Plan.MonthlyCost float32)"},
		{Operation: "list-metal-plans", Status: "200", Path: []string{"plans", "[]", "monthly_cost"}, Replace: true, Schema: `{"type": "number"}`, Source: "govultr v3.34.0 plan.go (BareMetalPlan.MonthlyCost float32)"},
		// A bare-metal plan's disk is a number of GB, as for every other
		// plan (govultr's BareMetalPlan.Disk is an int); the description
		// says string.
		{Operation: "list-metal-plans", Status: "200", Path: []string{"plans", "[]", "disk"}, Replace: true, Schema: `{"type": "integer"}`, Source: "govultr v3.34.0 plan.go (BareMetalPlan.Disk int)"},
		// The description names the bare-metal list "plans"; its own
		// example and the live API say "plans_metal".
		{Operation: "list-metal-plans", Status: "200", Path: []string{"plans_metal"}, SameAs: []string{"plans"}, Source: "the description's list-metal-plans example; govultr v3.34.0 plan.go (bareMetalPlansBase)"},
	}
}

// vultrOperations are the node-pool reads the live API serves and the
// description lacks; the fake serves them (the client does not call them).
func vultrOperations() []NewOperation {
	const pool = "/kubernetes/clusters/{vke-id}/node-pools/{nodepool-id}"
	meta := `{"type": "object", "properties": {"total": {"type": "integer"}, "links": {"type": "object", "properties": {"next": {"type": "string"}, "prev": {"type": "string"}}}}}`
	node := `{"type": "object", "properties": {"id": {"type": "string"}, "label": {"type": "string"}, "date_created": {"type": "string"},
		"ip": {"type": "string"}, "private_ip": {"type": "string"}, "status": {"type": "string"}}}`
	return []NewOperation{
		{
			ID: "list-nodepool-nodes", Method: "GET", Path: pool + "/nodes",
			Query:    map[string]string{"per_page": `{"type": "integer"}`, "cursor": `{"type": "string"}`},
			Response: `{"type": "object", "properties": {"worker_nodes": {"type": "array", "items": ` + node + `}, "meta": ` + meta + `}}`,
			Source:   "govultr v3.34.0 kubernetes.go (ListWorkerNodes, vkeWorkerNodesBase)",
		},
		{
			ID: "list-nodepool-labels", Method: "GET", Path: pool + "/labels",
			Response: `{"type": "object", "properties": {"labels": {"type": "array", "items": {"type": "object", "properties": {
				"id": {"type": "string"}, "key": {"type": "string"}, "value": {"type": "string"}}}}}}`,
			Source: "govultr v3.34.0 kubernetes.go (ListNodePoolLabels, NodePoolLabel)",
		},
		{
			ID: "list-nodepool-taints", Method: "GET", Path: pool + "/taints",
			Response: `{"type": "object", "properties": {"taints": {"type": "array", "items": {"type": "object", "properties": {
				"id": {"type": "string"}, "key": {"type": "string"}, "value": {"type": "string"}, "effect": {"type": "string"}}}}}}`,
			Source: "govultr v3.34.0 kubernetes.go (ListNodePoolTaints, NodePoolTaint)",
		},
	}
}
