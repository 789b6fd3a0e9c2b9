package exoapi

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"sync"
	"time"

	v3 "github.com/exoscale/egoscale/v3"
	"github.com/exoscale/egoscale/v3/credentials"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/credential"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
)

// userAgentComponent names this integration in the User-Agent, ahead of the
// SDK's own token; main's UA is prepended by the shared HTTP client.
const userAgentComponent = "cluster-autoscaler-provider-exoscale"

// Options configure a Client.
type Options struct {
	// APIKey and APISecret are the IAM key pair, re-read when their files
	// change. Never logged.
	APIKey    *credential.Credential
	APISecret *credential.Credential
	// Endpoint is the zone API base URL including "/v2".
	Endpoint string
	// Build carries what main sets on every cloud client (User-Agent,
	// instrumentation, rate limit) into cloudhttp.NewHTTPClient. egoscale's
	// own HTTP client is not used: it retries for ~15 s and hides status
	// codes.
	Build registry.BuildOptions
	// Retry tunes the retries (tests inject Sleep); zero values take the defaults.
	Retry cloudhttp.RetryOptions
}

// String never shows credentials.
func (o Options) String() string {
	return fmt.Sprintf("exoapi.Options{endpoint: %q, apiKey: <redacted>, apiSecret: <redacted>}", o.Endpoint)
}

// GoString never shows credentials.
func (o Options) GoString() string { return o.String() }

// Client is the thin Exoscale client.
type Client struct {
	endpoint string
	// apiKey and apiSecret are checked before every call: egoscale copies
	// the key pair into its client once, so a rotated key file needs a new
	// SDK client.
	apiKey, apiSecret *credential.Credential
	build             func(key, secret credential.Secret) (*v3.Client, error)

	mu  sync.Mutex
	api *v3.Client
}

// New builds a Client; it makes no network call.
func New(opts Options) (*Client, error) {
	var errs []error
	if !opts.APIKey.IsSet() || !opts.APISecret.IsSet() {
		errs = append(errs, errors.New("exoscale API key and secret are required"))
	}
	u, err := url.Parse(opts.Endpoint)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		errs = append(errs, fmt.Errorf("endpoint %q is not an http(s) URL", opts.Endpoint))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	// egoscale signs each request before it reaches the stack, so Exoscale
	// adds no layer of its own; a retry resends the signed request, valid
	// for ten minutes.
	hc := cloudhttp.NewHTTPClient(opts.Build.ClientOptions(), cloudhttp.HTTPStack{Cloud: cloudName, Operation: OperationName, Retry: opts.Retry})
	build := func(key, secret credential.Secret) (*v3.Client, error) {
		return v3.NewClient(
			credentials.NewStaticCredentials(key.Reveal(), secret.Reveal()),
			v3.ClientOptWithEndpoint(v3.Endpoint(opts.Endpoint)),
			v3.ClientOptWithHTTPClient(hc),
			v3.ClientOptWithUserAgent(userAgentComponent),
		)
	}
	c := &Client{endpoint: opts.Endpoint, apiKey: opts.APIKey, apiSecret: opts.APISecret, build: build}
	if err := c.rebuild(); err != nil {
		// The SDK's message names no secret; keep only its class.
		return nil, fmt.Errorf("create exoscale client: %w", err)
	}
	return c, nil
}

// rebuild makes a new SDK client from the current key pair; callers hold mu
// or own c exclusively.
func (c *Client) rebuild() error {
	key, err := c.apiKey.Value()
	if err != nil {
		return err
	}
	secret, err := c.apiSecret.Value()
	if err != nil {
		return err
	}
	api, err := c.build(key, secret)
	if err != nil {
		return err
	}
	c.api = api
	return nil
}

// sdk returns the SDK client, rebuilt when a key file changed. A failed
// rebuild keeps the previous client: its key may still work.
func (c *Client) sdk() *v3.Client {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.apiKey.Changed() || c.apiSecret.Changed() {
		if err := c.rebuild(); err != nil {
			klog.ErrorS(err, "Cannot use the rotated Exoscale key pair; keeping the previous one", "provider", "exoscale")
		}
	}
	return c.api
}

// TemplatePathAction returns the ":action" suffix of path, if any.
func TemplatePathAction(path string) string {
	for i := len(path) - 1; i >= 0 && path[i] != '/'; i-- {
		if path[i] == ':' {
			return path[i+1:]
		}
	}
	return ""
}

// String never shows credentials.
func (c *Client) String() string { return "exoapi.Client{endpoint: " + c.endpoint + "}" }

// GoString never shows credentials.
func (c *Client) GoString() string { return c.String() }

// ListSKSClusters returns every SKS cluster of the zone with its nodepools.
func (c *Client) ListSKSClusters(ctx context.Context) ([]Cluster, error) {
	resp, err := call(ctx, "ListSKSClusters", func(ctx context.Context) (*v3.ListSKSClustersResponse, error) {
		return c.sdk().ListSKSClusters(ctx)
	})
	if err != nil {
		return nil, err
	}
	out := make([]Cluster, 0, len(resp.SKSClusters))
	for _, cl := range resp.SKSClusters {
		c := Cluster{ID: string(cl.ID), Name: cl.Name, State: string(cl.State)}
		for _, np := range cl.Nodepools {
			c.Nodepools = append(c.Nodepools, fromNodepool(c.ID, np))
		}
		out = append(out, c)
	}
	return out, nil
}

func fromNodepool(clusterID string, np v3.SKSNodepool) Nodepool {
	n := Nodepool{
		ID: string(np.ID), ClusterID: clusterID, Name: np.Name, State: string(np.State),
		Size: int(np.Size), DiskSizeGiB: int(np.DiskSize),
	}
	if np.InstancePool != nil {
		n.InstancePoolID = string(np.InstancePool.ID)
	}
	if np.InstanceType != nil {
		n.InstanceTypeID = string(np.InstanceType.ID)
	}
	if len(np.Labels) > 0 {
		n.Labels = make(map[string]string, len(np.Labels))
		for k, v := range np.Labels {
			n.Labels[k] = v
		}
	}
	for k, t := range np.Taints {
		n.Taints = append(n.Taints, Taint{Key: k, Value: t.Value, Effect: string(t.Effect)})
	}
	return n
}

// ListInstancePools returns every instance pool of the zone.
func (c *Client) ListInstancePools(ctx context.Context) ([]InstancePool, error) {
	resp, err := call(ctx, "ListInstancePools", func(ctx context.Context) (*v3.ListInstancePoolsResponse, error) {
		return c.sdk().ListInstancePools(ctx)
	})
	if err != nil {
		return nil, err
	}
	out := make([]InstancePool, 0, len(resp.InstancePools))
	for _, p := range resp.InstancePools {
		out = append(out, fromPool(p))
	}
	return out, nil
}

func fromPool(p v3.InstancePool) InstancePool {
	ip := InstancePool{ID: string(p.ID), Name: p.Name, State: string(p.State), Size: int(p.Size), DiskSizeGiB: int(p.DiskSize)}
	if p.Manager != nil {
		ip.ManagerType = string(p.Manager.Type)
		ip.ManagerID = string(p.Manager.ID)
	}
	if p.InstanceType != nil {
		ip.InstanceTypeID = string(p.InstanceType.ID)
	}
	for _, m := range p.Instances {
		ip.InstanceIDs = append(ip.InstanceIDs, string(m.ID))
	}
	if len(p.Labels) > 0 {
		ip.Labels = maps.Clone(map[string]string(p.Labels))
	}
	return ip
}

// GetInstancePool returns one instance pool.
func (c *Client) GetInstancePool(ctx context.Context, id string) (InstancePool, error) {
	p, err := call(ctx, "GetInstancePool", func(ctx context.Context) (*v3.InstancePool, error) {
		return c.sdk().GetInstancePool(ctx, v3.UUID(id))
	})
	if err != nil {
		return InstancePool{}, err
	}
	if p.ID == "" {
		// The API can answer an unknown id with an empty 200, which says
		// that the pool does not exist.
		return InstancePool{}, cloudhttp.AnswerError(cloudName, "GetInstancePool", cloudhttp.ErrorAnswer{Status: http.StatusOK, Message: "empty object", CloudError: true, Class: cloudprovider.ErrNotFound})
	}
	return fromPool(*p), nil
}

// ListPoolMembers returns every instance managed by an instance pool, with
// its state and manager, in one call.
func (c *Client) ListPoolMembers(ctx context.Context) ([]Instance, error) {
	resp, err := call(ctx, "ListInstances", func(ctx context.Context) (*v3.ListInstancesResponse, error) {
		return c.sdk().ListInstances(ctx, v3.ListInstancesWithManagerType(v3.ListInstancesManagerTypeInstancePool))
	})
	if err != nil {
		return nil, err
	}
	out := make([]Instance, 0, len(resp.Instances))
	for _, in := range resp.Instances {
		out = append(out, newInstance(in.ID, in.Name, in.State, in.CreatedAT, in.Manager, in.InstanceType))
	}
	return out, nil
}

// newInstance converts the fields of one instance of a list answer.
func newInstance(id v3.UUID, name string, state v3.InstanceState, created time.Time, mgr *v3.Manager, it *v3.InstanceType) Instance {
	i := Instance{ID: string(id), Name: name, State: string(state), CreatedAt: created}
	if mgr != nil {
		i.ManagerType = string(mgr.Type)
		i.ManagerID = string(mgr.ID)
	}
	if it != nil {
		i.InstanceTypeID = string(it.ID)
	}
	return i
}

// GetQuota returns the organisation quota of entity (e.g. "instance").
func (c *Client) GetQuota(ctx context.Context, entity string) (Quota, error) {
	q, err := call(ctx, "GetQuota", func(ctx context.Context) (*v3.Quota, error) {
		return c.sdk().GetQuota(ctx, entity)
	})
	if err != nil {
		return Quota{}, err
	}
	return Quota{Resource: q.Resource, Usage: q.Usage, Limit: q.Limit}, nil
}

// GetInstanceType returns one instance type.
func (c *Client) GetInstanceType(ctx context.Context, id string) (InstanceType, error) {
	t, err := call(ctx, "GetInstanceType", func(ctx context.Context) (*v3.InstanceType, error) {
		return c.sdk().GetInstanceType(ctx, v3.UUID(id))
	})
	if err != nil {
		return InstanceType{}, err
	}
	if t.ID == "" {
		return InstanceType{}, cloudhttp.AnswerError(cloudName, "GetInstanceType", cloudhttp.ErrorAnswer{Status: http.StatusOK, Message: "empty object", CloudError: true, Class: cloudprovider.ErrNotFound})
	}
	return InstanceType{ID: string(t.ID), Family: string(t.Family), Size: string(t.Size), CPUs: int(t.Cpus), MemoryBytes: t.Memory, GPUs: int(t.Gpus)}, nil
}

// ScaleInstancePool sets a plain pool's size (absolute) and returns the
// operation without waiting for it.
func (c *Client) ScaleInstancePool(ctx context.Context, poolID string, size int) (Operation, error) {
	// An absolute size: repeating it after a lost answer adds nothing.
	ctx = cloudhttp.WithCallKind(ctx, cloudhttp.CallIdempotent)
	return op(call(ctx, "ScaleInstancePool", func(ctx context.Context) (*v3.Operation, error) {
		return c.sdk().ScaleInstancePool(ctx, v3.UUID(poolID), v3.ScaleInstancePoolRequest{Size: int64(size)})
	}))
}

// EvictInstancePoolMembers removes members from a plain pool, shrinking it by
// as many, and returns the operation without waiting for it.
func (c *Client) EvictInstancePoolMembers(ctx context.Context, poolID string, instanceIDs []string) (Operation, error) {
	// A repeat after a lost answer would be refused because some members
	// are already gone, and read as a refusal of the whole eviction.
	ctx = cloudhttp.WithCallKind(ctx, cloudhttp.CallOnce)
	return op(call(ctx, "EvictInstancePoolMembers", func(ctx context.Context) (*v3.Operation, error) {
		return c.sdk().EvictInstancePoolMembers(ctx, v3.UUID(poolID), v3.EvictInstancePoolMembersRequest{Instances: uuids(instanceIDs)})
	}))
}

// ScaleSKSNodepool sets a nodepool's size (absolute).
func (c *Client) ScaleSKSNodepool(ctx context.Context, clusterID, nodepoolID string, size int) (Operation, error) {
	ctx = cloudhttp.WithCallKind(ctx, cloudhttp.CallIdempotent)
	return op(call(ctx, "ScaleSKSNodepool", func(ctx context.Context) (*v3.Operation, error) {
		return c.sdk().ScaleSKSNodepool(ctx, v3.UUID(clusterID), v3.UUID(nodepoolID), v3.ScaleSKSNodepoolRequest{Size: int64(size)})
	}))
}

// EvictSKSNodepoolMembers removes members from a nodepool.
func (c *Client) EvictSKSNodepoolMembers(ctx context.Context, clusterID, nodepoolID string, instanceIDs []string) (Operation, error) {
	ctx = cloudhttp.WithCallKind(ctx, cloudhttp.CallOnce)
	return op(call(ctx, "EvictSKSNodepoolMembers", func(ctx context.Context) (*v3.Operation, error) {
		return c.sdk().EvictSKSNodepoolMembers(ctx, v3.UUID(clusterID), v3.UUID(nodepoolID), v3.EvictSKSNodepoolMembersRequest{Instances: uuids(instanceIDs)})
	}))
}

// GetOperation returns an operation's current state (one GET, no polling).
func (c *Client) GetOperation(ctx context.Context, id string) (Operation, error) {
	return op(call(ctx, "GetOperation", func(ctx context.Context) (*v3.Operation, error) {
		return c.sdk().GetOperation(ctx, v3.UUID(id))
	}))
}

func op(o *v3.Operation, err error) (Operation, error) {
	if err != nil {
		return Operation{}, err
	}
	out := Operation{ID: string(o.ID), State: string(o.State), Reason: string(o.Reason), Message: o.Message}
	if o.Reference != nil {
		out.ReferenceID = string(o.Reference.ID)
	}
	return out, nil
}

func uuids(ids []string) []v3.UUID {
	out := make([]v3.UUID, len(ids))
	for i, id := range ids {
		out[i] = v3.UUID(id)
	}
	return out
}
