// Package exoapi is the provider's thin Exoscale client: the calls it needs,
// on top of egoscale v3, with plain result types and errors classified by
// HTTP status (never by message text).
package exoapi

import "time"

// Cluster is an SKS cluster with its nodepools.
type Cluster struct {
	ID        string
	Name      string
	State     string
	Nodepools []Nodepool
}

// Taint is one nodepool taint.
type Taint struct {
	Key    string
	Value  string
	Effect string
}

// Nodepool is an SKS nodepool; it drives one instance pool.
type Nodepool struct {
	ID             string
	ClusterID      string
	Name           string
	State          string
	Size           int
	InstancePoolID string
	InstanceTypeID string
	DiskSizeGiB    int
	Labels         map[string]string
	Taints         []Taint
}

// InstancePool is an instance pool (plain, or managed by an SKS nodepool).
type InstancePool struct {
	ID          string
	Name        string
	State       string
	Size        int
	ManagerType string
	ManagerID   string
	// InstanceIDs are the members as listed on the pool (may be empty).
	InstanceIDs    []string
	InstanceTypeID string
	DiskSizeGiB    int
	// Labels are the pool's resource labels (not Kubernetes labels).
	Labels map[string]string
}

// Instance is a Compute instance.
type Instance struct {
	ID             string
	Name           string
	State          string
	ManagerType    string
	ManagerID      string
	InstanceTypeID string
	CreatedAt      time.Time
}

// InstanceType describes a Compute instance type.
type InstanceType struct {
	ID     string
	Family string
	Size   string
	CPUs   int
	// MemoryBytes is the memory in bytes, as the API reports it.
	MemoryBytes int64
	GPUs        int
}

// Name returns the "<family>.<size>" form the Exoscale CCM uses for the
// node.kubernetes.io/instance-type label.
func (t InstanceType) Name() string { return t.Family + "." + t.Size }

// Operation is an asynchronous API operation.
type Operation struct {
	ID          string
	State       string
	Reason      string
	Message     string
	ReferenceID string
}

// Operation states.
const (
	OperationPending = "pending"
	OperationSuccess = "success"
	OperationFailure = "failure"
	OperationTimeout = "timeout"
)

// OperationReasonPartial is the failure reason of an operation the cloud
// carried out in part.
const OperationReasonPartial = "partial"

// Done reports whether the operation reached a final state.
func (o Operation) Done() bool { return o.State != "" && o.State != OperationPending }

// Quota is an organisation quota for one resource.
type Quota struct {
	Resource string
	Usage    int64
	// Limit is -1 when unlimited.
	Limit int64
}
