// Package vultrapi is a small client for the part of the Vultr API v2 that the
// cluster-autoscaler provider uses: VKE node pools, their nodes, and plans.
//
// It does not use github.com/vultr/govultr/v3, because that SDK drops the
// HTTP status of failed calls (errors are "error returned from api :
// <message>" with a nil *http.Response), so 404, 401 and 429 look alike; it
// silently decodes nothing when the content type is not exactly
// application/json; and it honours Retry-After without a cap, which can
// outlive CA's 5 s RPC deadline. DeleteNodes must tell "node already gone"
// apart, Refresh must report rate limiting, and every call must end within
// the deadline. The provider needs six plain JSON requests, so its own thin
// client costs less than working around the SDK.
//
// The HTTP stack is cloudhttp.NewHTTPClient's; Vultr adds only the bearer
// token (golang.org/x/oauth2 transport).
package vultrapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/oauth2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
)

// maxPages stops a list that never ends (a server repeating a cursor).
const maxPages = 1000

// maxErrorBody bounds how much of an error body is read and quoted.
const maxErrorBody = 4 << 10

// Options configures a Client.
type Options struct {
	// BaseURL is the API endpoint without the /v2 prefix (default DefaultBaseURL).
	BaseURL string
	// Build carries what main sets on every cloud client (User-Agent,
	// instrumentation, rate limit) into cloudhttp.NewHTTPClient.
	Build registry.BuildOptions
	// Token supplies the API key for the Authorization: Bearer header.
	Token oauth2.TokenSource
	// Retry tunes the retry transport; zero values take the defaults.
	Retry cloudhttp.RetryOptions
	// PerPage is the page size asked for on list calls (default MaxPerPage).
	PerPage int
}

// Client calls the Vultr API. It is safe for concurrent use.
type Client struct {
	base    *url.URL
	http    *http.Client
	perPage int
}

// New validates opts and returns a client.
func New(opts Options) (*Client, error) {
	if opts.Token == nil {
		return nil, fmt.Errorf("vultrapi: no token source")
	}
	raw := opts.BaseURL
	if raw == "" {
		raw = DefaultBaseURL
	}
	base, err := url.Parse(raw)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("vultrapi: base URL %q must be an absolute http(s) URL", raw)
	}
	base.Path = strings.TrimSuffix(base.Path, "/")
	hc := cloudhttp.NewHTTPClient(opts.Build.ClientOptions(), cloudhttp.HTTPStack{
		Cloud:     cloudName,
		Operation: Operation,
		Auth: func(next http.RoundTripper) http.RoundTripper {
			return &oauth2.Transport{Source: opts.Token, Base: next}
		},
		Retry: opts.Retry,
	})
	perPage := opts.PerPage
	if perPage <= 0 || perPage > MaxPerPage {
		perPage = MaxPerPage
	}
	return &Client{base: base, http: hc, perPage: perPage}, nil
}

// Operation maps a request to its metrics label: method plus path with every
// id replaced by {id}, e.g. "PATCH /v2/kubernetes/clusters/{id}/node-pools/{id}".
func Operation(req *http.Request) string {
	segs := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	for i, s := range segs {
		if !staticSegments[s] {
			segs[i] = "{id}"
		}
	}
	return req.Method + " /" + strings.Join(segs, "/")
}

// GetCluster returns the VKE cluster (for its region).
func (c *Client) GetCluster(ctx context.Context, clusterID string) (*Cluster, error) {
	var out struct {
		Cluster *Cluster `json:"vke_cluster"`
	}
	if err := c.do(ctx, http.MethodGet, fmt.Sprintf(PathCluster, url.PathEscape(clusterID)), nil, nil, &out); err != nil {
		return nil, err
	}
	if out.Cluster == nil {
		return nil, cloudhttp.MalformedAnswer(cloudName, "GET "+fmt.Sprintf(PathCluster, url.PathEscape(clusterID)), http.StatusOK, "no vke_cluster in the answer")
	}
	return out.Cluster, nil
}

// ListNodePools returns every node pool of the cluster, following pagination.
func (c *Client) ListNodePools(ctx context.Context, clusterID string) ([]NodePool, error) {
	return listAll[NodePool](ctx, c, fmt.Sprintf(PathNodePools, url.PathEscape(clusterID)), "node_pools")
}

// GetNodePool returns one node pool.
func (c *Client) GetNodePool(ctx context.Context, clusterID, poolID string) (*NodePool, error) {
	var out struct {
		Pool *NodePool `json:"node_pool"`
	}
	path := fmt.Sprintf(PathNodePool, url.PathEscape(clusterID), url.PathEscape(poolID))
	if err := c.do(ctx, http.MethodGet, path, nil, nil, &out); err != nil {
		return nil, err
	}
	if out.Pool == nil {
		return nil, cloudhttp.MalformedAnswer(cloudName, "GET "+path, http.StatusOK, "no node_pool in the answer")
	}
	return out.Pool, nil
}

// SetNodePoolQuantity sets the pool's node_quantity and returns the pool as
// Vultr reports it after the change. A response without node_pool is an
// error, never a nil pool.
func (c *Client) SetNodePoolQuantity(ctx context.Context, clusterID, poolID string, quantity int) (*NodePool, error) {
	if quantity < 1 {
		// VKE pools cannot go below one node, and a zero would be dropped by
		// omitempty in Vultr's own tooling; refuse before calling.
		return nil, cloudprovider.Errorf(cloudprovider.ErrInvalidArgument, "set node pool %s quantity to %d: a VKE pool holds at least one node", poolID, quantity)
	}
	body := struct {
		NodeQuantity int `json:"node_quantity"`
	}{quantity}
	var out struct {
		Pool *NodePool `json:"node_pool"`
	}
	path := fmt.Sprintf(PathNodePool, url.PathEscape(clusterID), url.PathEscape(poolID))
	// An absolute quantity: repeating it after a lost answer adds nothing.
	ctx = cloudhttp.WithCallKind(ctx, cloudhttp.CallIdempotent)
	if err := c.do(ctx, http.MethodPatch, path, nil, body, &out); err != nil {
		return nil, err
	}
	if out.Pool == nil {
		// Vultr answered 2xx, so the quantity is set; only the pool's new
		// state is missing from the answer.
		return nil, cloudhttp.MalformedAnswer(cloudName, http.MethodPatch+" "+path, http.StatusOK,
			"set node pool %s quantity to %d: no node_pool in the answer", poolID, quantity)
	}
	return out.Pool, nil
}

// DeleteNode deletes one node of a pool; Vultr lowers node_quantity by one.
func (c *Client) DeleteNode(ctx context.Context, clusterID, poolID, nodeID string) error {
	path := fmt.Sprintf(PathNodePoolNode, url.PathEscape(clusterID), url.PathEscape(poolID), url.PathEscape(nodeID))
	return c.do(ctx, http.MethodDelete, path, nil, nil, nil)
}

// ListPlans returns every cloud-compute plan, following pagination.
func (c *Client) ListPlans(ctx context.Context) ([]Plan, error) {
	return listAll[Plan](ctx, c, PathPlans, "plans")
}

// ListMetalPlans returns every bare-metal plan, following pagination.
func (c *Client) ListMetalPlans(ctx context.Context) ([]MetalPlan, error) {
	return listAll[MetalPlan](ctx, c, PathMetalPlans, "plans_metal")
}

func listAll[T any](ctx context.Context, c *Client, path, key string) ([]T, error) {
	var all []T
	seen := map[string]bool{}
	cursor := ""
	for page := 0; page < maxPages; page++ {
		q := url.Values{QueryPerPage: {strconv.Itoa(c.perPage)}}
		if cursor != "" {
			q.Set(QueryCursor, cursor)
		}
		var raw map[string]json.RawMessage
		if err := c.do(ctx, http.MethodGet, path, q, nil, &raw); err != nil {
			return nil, err
		}
		items, ok := raw[key]
		if !ok {
			return nil, cloudhttp.MalformedAnswer(cloudName, "GET "+path, http.StatusOK, "no %q in the answer", key)
		}
		var batch []T
		if err := json.Unmarshal(items, &batch); err != nil {
			return nil, cloudhttp.MalformedAnswer(cloudName, "GET "+path, http.StatusOK, "%q does not parse: %v", key, err)
		}
		all = append(all, batch...)
		var meta Meta
		if m, ok := raw["meta"]; ok {
			if err := json.Unmarshal(m, &meta); err != nil {
				return nil, cloudhttp.MalformedAnswer(cloudName, "GET "+path, http.StatusOK, "meta does not parse: %v", err)
			}
		}
		if meta.Links.Next == "" {
			return all, nil
		}
		if seen[meta.Links.Next] {
			return nil, cloudhttp.MalformedAnswer(cloudName, "GET "+path, http.StatusOK, "cursor repeated after %d pages", page+1)
		}
		seen[meta.Links.Next] = true
		cursor = meta.Links.Next
	}
	return nil, cloudhttp.MalformedAnswer(cloudName, "GET "+path, http.StatusOK, "more than %d pages", maxPages)
}

func (c *Client) do(ctx context.Context, method, path string, query url.Values, in, out any) error {
	u := *c.base
	u.Path = c.base.Path + path
	u.RawQuery = query.Encode()
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return fmt.Errorf("encode %s %s: %w", method, path, err)
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("build %s %s: %w", method, path, err)
	}
	if body == nil {
		req.Body, req.GetBody, req.ContentLength = http.NoBody, nil, 0
	} else {
		req.Header.Set("Content-Type", ContentTypeJSON)
	}
	req.Header.Set("Accept", ContentTypeJSON)

	resp, err := c.http.Do(req)
	if err != nil {
		// url.Error carries the URL only, never headers, so the token stays out.
		return cloudhttp.NoAnswer(cloudName, method+" "+path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return apiError(method, path, resp)
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		return nil
	}
	return cloudhttp.DecodeJSON(cloudName, method+" "+path, resp, out)
}

func apiError(method, path string, resp *http.Response) error {
	a := cloudhttp.ErrorAnswer{Status: resp.StatusCode}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		a.RetryAfter = cloudhttp.RetryAfter(resp.Header, 0)
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var eb ErrorBody
	if json.Unmarshal(raw, &eb) == nil && eb.Error != "" {
		a.Message = eb.Error
	} else {
		a.Message = string(raw)
	}
	return cloudhttp.AnswerError(cloudName, method+" "+path, a)
}
