package exoapi

import (
	"net/http"
	"strings"
)

// API paths, relative to the zone endpoint (which ends in /v2). The SDK builds
// them itself; they are named here for the fake API and for metric labels.
const (
	// PathSKSClusters lists SKS clusters with their nodepools embedded.
	PathSKSClusters = "/sks-cluster"
	// PathInstancePools lists instance pools.
	PathInstancePools = "/instance-pool"
	// PathInstances lists Compute instances (filterable by manager).
	PathInstances = "/instance"
	// PathQuota is the prefix of GET /quota/{entity}.
	PathQuota = "/quota"
	// PathInstanceTypes is the prefix of GET /instance-type/{id}.
	PathInstanceTypes = "/instance-type"
	// PathOperations is the prefix of GET /operation/{id}.
	PathOperations = "/operation"
	// SegmentNodepool is the sub-collection of nodepools under a cluster.
	SegmentNodepool = "nodepool"
	// ActionScale is the suffix of the scale endpoints ("/instance-pool/{id}:scale").
	ActionScale = "scale"
	// ActionEvict is the suffix of the evict endpoints.
	ActionEvict = "evict"
	// QueryManagerType filters GET /instance by manager type.
	QueryManagerType = "manager-type"
	// QueryManagerID filters GET /instance by manager id.
	QueryManagerID = "manager-id"
	// ManagerTypeInstancePool is the manager type of instance-pool members.
	ManagerTypeInstancePool = "instance-pool"
	// ManagerTypeSKSNodepool is the manager type of a nodepool's instance pool.
	ManagerTypeSKSNodepool = "sks-nodepool"
	// QuotaEntityInstance is the quota entity counting Compute instances.
	QuotaEntityInstance = "instance"
)

// collections are the fixed path words of the API; every other segment is an
// id (or a quota entity) and becomes a placeholder in metric labels.
var collections = map[string]bool{
	"v2": true, "sks-cluster": true, "nodepool": true, "instance-pool": true,
	"instance": true, "quota": true, "instance-type": true, "operation": true, "zone": true,
}

// OperationName maps a request to a bounded metric label such as
// "PUT /v2/instance-pool/{id}:scale": ids are replaced, actions kept.
func OperationName(req *http.Request) string {
	return req.Method + " " + TemplatePath(req.URL.Path)
}

// TemplatePath replaces every id segment of path with "{id}", keeping the
// ":action" suffix that Exoscale appends to the last segment.
func TemplatePath(path string) string {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for i, s := range segs {
		name, action, hasAction := strings.Cut(s, ":")
		if !collections[name] {
			name = "{id}"
		}
		if hasAction {
			switch action {
			case ActionScale, ActionEvict:
			default:
				action = "{action}"
			}
			name += ":" + action
		}
		segs[i] = name
	}
	return "/" + strings.Join(segs, "/")
}

// IAMOperation returns the Exoscale IAM operation of a request named by
// OperationName: the API's operation id, which a role policy's `operation`
// matches (docs/providers/exoscale.md#permissions). It covers every route the
// fake API serves and returns "" for any other.
func IAMOperation(op string) string {
	if strings.HasPrefix(op, "GET /v2"+PathQuota+"/") && !strings.Contains(strings.TrimPrefix(op, "GET /v2"+PathQuota+"/"), "/") {
		// The quota entity keeps its name: "instance" is a collection word.
		return "get-quota"
	}
	switch op {
	case "GET /v2/sks-cluster":
		return "list-sks-clusters"
	case "GET /v2/sks-cluster/{id}":
		return "get-sks-cluster"
	case "GET /v2/sks-cluster/{id}/nodepool/{id}":
		return "get-sks-nodepool"
	case "PUT /v2/sks-cluster/{id}/nodepool/{id}:scale":
		return "scale-sks-nodepool"
	case "PUT /v2/sks-cluster/{id}/nodepool/{id}:evict":
		return "evict-sks-nodepool-members"
	case "GET /v2/instance-pool":
		return "list-instance-pools"
	case "GET /v2/instance-pool/{id}":
		return "get-instance-pool"
	case "PUT /v2/instance-pool/{id}:scale":
		return "scale-instance-pool"
	case "PUT /v2/instance-pool/{id}:evict":
		return "evict-instance-pool-members"
	case "GET /v2/instance":
		return "list-instances"
	case "GET /v2/instance/{id}":
		return "get-instance"
	case "GET /v2/quota":
		return "list-quotas"
	case "GET /v2/instance-type":
		return "list-instance-types"
	case "GET /v2/instance-type/{id}":
		return "get-instance-type"
	case "GET /v2/operation/{id}":
		return "get-operation"
	}
	return ""
}
