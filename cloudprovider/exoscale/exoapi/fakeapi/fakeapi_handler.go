package fakeapi

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
)

// Wire shapes (kebab-case, empty collections omitted like the real serializer).
type (
	ref struct {
		ID string `json:"id"`
	}
	manager struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	}
	taint struct {
		Value  string `json:"value"`
		Effect string `json:"effect"`
	}
	nodepoolJSON struct {
		ID           string            `json:"id"`
		Name         string            `json:"name"`
		Size         int               `json:"size"`
		State        string            `json:"state"`
		InstancePool *ref              `json:"instance-pool,omitempty"`
		InstanceType *ref              `json:"instance-type,omitempty"`
		Labels       map[string]string `json:"labels,omitempty"`
		Taints       map[string]taint  `json:"taints,omitempty"`
		Template     *ref              `json:"template,omitempty"`
		Version      string            `json:"version,omitempty"`
		DiskSize     int               `json:"disk-size,omitempty"`
	}
	clusterJSON struct {
		ID        string         `json:"id"`
		Name      string         `json:"name"`
		State     string         `json:"state"`
		Version   string         `json:"version"`
		Nodepools []nodepoolJSON `json:"nodepools,omitempty"`
	}
	poolJSON struct {
		ID           string            `json:"id"`
		Name         string            `json:"name"`
		Size         int               `json:"size"`
		State        string            `json:"state"`
		Labels       map[string]string `json:"labels,omitempty"`
		Manager      *manager          `json:"manager,omitempty"`
		Instances    []ref             `json:"instances,omitempty"`
		InstanceType *ref              `json:"instance-type,omitempty"`
		DiskSize     int               `json:"disk-size,omitempty"`
	}
	instanceJSON struct {
		ID           string   `json:"id"`
		Name         string   `json:"name"`
		State        string   `json:"state"`
		Manager      *manager `json:"manager,omitempty"`
		InstanceType *ref     `json:"instance-type,omitempty"`
		CreatedAt    string   `json:"created-at,omitempty"`
	}
	typeJSON struct {
		ID         string `json:"id"`
		Family     string `json:"family"`
		Size       string `json:"size"`
		CPUs       int    `json:"cpus"`
		Memory     int64  `json:"memory"`
		GPUs       int    `json:"gpus,omitempty"`
		Authorized bool   `json:"authorized"`
	}
	operationJSON struct {
		ID        string `json:"id"`
		State     string `json:"state"`
		Reason    string `json:"reason,omitempty"`
		Message   string `json:"message,omitempty"`
		Reference struct {
			ID      string `json:"id"`
			Link    string `json:"link"`
			Command string `json:"command"`
		} `json:"reference"`
	}
	quotaJSON struct {
		Resource string `json:"resource"`
		Usage    int64  `json:"usage"`
		Limit    int64  `json:"limit"`
	}
)

type apiError struct {
	status int
	msg    string
}

// serve checks the signature, then the role policy, and answers from the
// routes.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if s.opts.APIKey != "" {
		if err := s.verifySignature(r, body); err != "" {
			writeError(w, http.StatusUnauthorized, "", err)
			return
		}
	}
	if s.refused(w, r) {
		return
	}
	path, ok := trimBase(r.URL.Path)
	if !ok {
		writeError(w, http.StatusNotFound, "", "no such endpoint")
		return
	}
	s.mu.Lock()
	s.advanceLocked(time.Time{}, false)
	out, aerr := s.route(r, path, body)
	s.mu.Unlock()
	if aerr != nil {
		writeError(w, aerr.status, "", aerr.msg)
		return
	}
	fakecloud.WriteJSON(w, http.StatusOK, out)
}

// writeError writes Exoscale's error body, {"message": ...}; the API has no
// separate error code, so code is unused.
func writeError(w http.ResponseWriter, status int, _ string, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": message})
}

// route dispatches one request; s.mu is held.
func (s *Server) route(r *http.Request, path string, body []byte) (any, *apiError) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	last := segs[len(segs)-1]
	action := ""
	if i := strings.LastIndex(last, ":"); i >= 0 {
		action = last[i+1:]
		segs[len(segs)-1] = last[:i]
	}
	get := r.Method == http.MethodGet && action == ""
	put := r.Method == http.MethodPut && action != ""
	switch {
	case get && path == exoapi.PathSKSClusters:
		out := struct {
			Clusters []clusterJSON `json:"sks-clusters,omitempty"`
		}{}
		for _, c := range s.clusters {
			out.Clusters = append(out.Clusters, s.clusterJSON(c))
		}
		return out, nil
	case get && len(segs) == 2 && segs[0] == "sks-cluster":
		if c := s.cluster(segs[1]); c != nil {
			return s.clusterJSON(c), nil
		}
		return nil, notFound("sks-cluster", segs[1])
	case get && len(segs) == 4 && segs[0] == "sks-cluster" && segs[2] == exoapi.SegmentNodepool:
		if np := s.nodepool(segs[1], segs[3]); np != nil {
			return s.nodepoolJSON(np), nil
		}
		return nil, notFound("sks-nodepool", segs[3])
	case put && len(segs) == 4 && segs[0] == "sks-cluster" && segs[2] == exoapi.SegmentNodepool:
		np := s.nodepool(segs[1], segs[3])
		if np == nil {
			return nil, notFound("sks-nodepool", segs[3])
		}
		return s.mutate(s.pools[np.poolID], np.id, action, body)
	case get && path == exoapi.PathInstancePools:
		out := struct {
			Pools []poolJSON `json:"instance-pools,omitempty"`
		}{}
		for _, id := range s.poolOrder {
			out.Pools = append(out.Pools, s.poolJSON(s.pools[id]))
		}
		return out, nil
	case get && len(segs) == 2 && segs[0] == "instance-pool":
		if p := s.pools[segs[1]]; p != nil {
			return s.poolJSON(p), nil
		}
		return nil, notFound("instance-pool", segs[1])
	case put && len(segs) == 2 && segs[0] == "instance-pool":
		p := s.pools[segs[1]]
		if p == nil {
			return nil, notFound("instance-pool", segs[1])
		}
		if p.nodepoolID != "" {
			return nil, &apiError{http.StatusForbidden, "instance pool is managed by an SKS nodepool"}
		}
		return s.mutate(p, p.id, action, body)
	case get && path == exoapi.PathInstances:
		q := r.URL.Query()
		out := struct {
			Instances []instanceJSON `json:"instances,omitempty"`
		}{}
		for _, id := range sortedKeys(s.instances) {
			in := s.instances[id]
			if in.unlisted {
				continue
			}
			if mt := q.Get(exoapi.QueryManagerType); mt != "" && (mt != exoapi.ManagerTypeInstancePool || in.poolID == "") {
				continue
			}
			if mid := q.Get(exoapi.QueryManagerID); mid != "" && in.poolID != mid {
				continue
			}
			out.Instances = append(out.Instances, s.instanceJSON(in))
		}
		return out, nil
	case get && len(segs) == 2 && segs[0] == "instance":
		if in := s.instances[segs[1]]; in != nil && !in.unlisted {
			return s.instanceJSON(in), nil
		}
		return nil, notFound("instance", segs[1])
	case get && len(segs) == 2 && segs[0] == "quota":
		if segs[1] != exoapi.QuotaEntityInstance {
			return nil, notFound("quota", segs[1])
		}
		return s.quotaJSON(), nil
	case get && path == exoapi.PathQuota:
		return map[string][]quotaJSON{"quotas": {s.quotaJSON()}}, nil
	case get && path == exoapi.PathInstanceTypes:
		out := struct {
			Types []typeJSON `json:"instance-types,omitempty"`
		}{}
		for _, id := range sortedKeys(s.types) {
			out.Types = append(out.Types, toTypeJSON(s.types[id]))
		}
		return out, nil
	case get && len(segs) == 2 && segs[0] == "instance-type":
		if t := s.types[segs[1]]; t != nil {
			return toTypeJSON(t), nil
		}
		return nil, notFound("instance-type", segs[1])
	case get && len(segs) == 2 && segs[0] == "operation":
		if op := s.ops[segs[1]]; op != nil {
			return s.operationJSON(op), nil
		}
		return nil, notFound("operation", segs[1])
	}
	return nil, &apiError{http.StatusNotFound, fmt.Sprintf("no route for %s %s", r.Method, r.URL.Path)}
}

func notFound(kind, id string) *apiError {
	return &apiError{http.StatusNotFound, fmt.Sprintf("%s %s not found", kind, id)}
}

// mutate applies :scale or :evict to p; s.mu is held.
func (s *Server) mutate(p *pool, refID, action string, body []byte) (any, *apiError) {
	busy := s.poolStateLocked(p) != PoolRunning
	if s.opts.Busy == BusyRefuse && busy {
		return nil, &apiError{http.StatusConflict, fmt.Sprintf("instance pool %s is %s", p.id, s.poolStateLocked(p))}
	}
	overQuota := false
	now := s.opts.Now()
	live := 0
	for _, id := range p.members {
		if s.instances[id].state != InstanceDestroying {
			live++
		}
	}
	var apply func()
	switch action {
	case exoapi.ActionScale:
		var req struct {
			Size *int `json:"size"`
		}
		if err := json.Unmarshal(body, &req); err != nil || req.Size == nil {
			return nil, &apiError{http.StatusBadRequest, "body must be {\"size\": N}"}
		}
		size := *req.Size
		// egoscale v3.1.43's OpenAPI spec (ScaleSKSNodepoolRequest and
		// ScaleInstancePoolRequest, field size): gte=0. v3.1.30's said gt=0;
		// the provider uses v3.1.43, so 0 is accepted and only negatives refused.
		if size < 0 {
			return nil, &apiError{http.StatusBadRequest, "size must be >= 0"}
		}
		if grow := size - p.size; grow > 0 && s.opts.QuotaLimit >= 0 && s.usageLocked()+int64(grow) > s.opts.QuotaLimit {
			if !s.opts.QuotaAsFailedOperation {
				return nil, &apiError{http.StatusBadRequest, "instance quota exceeded"}
			}
			overQuota = true
		}
		apply = func() {
			if live < size {
				for ; live < size; live++ {
					s.newInstanceLocked(p, now).unlisted = p.listLate
				}
				p.listLate = false
			}
			// Scaling down by size removes members the API chooses
			// (undocumented): the newest, or the oldest with
			// ScaleDownOldestFirst.
			order := slices.Clone(p.members)
			if !s.opts.ScaleDownOldestFirst {
				slices.Reverse(order)
			}
			for _, id := range order {
				if live <= size {
					break
				}
				in := s.instances[id]
				if in.state != InstanceDestroying {
					s.destroyLocked(in, s.opts.Now())
					live--
				}
			}
			p.size = size
		}
	case exoapi.ActionEvict:
		var req struct {
			Instances []string `json:"instances"`
		}
		if err := json.Unmarshal(body, &req); err != nil || len(req.Instances) == 0 {
			return nil, &apiError{http.StatusBadRequest, "body must be {\"instances\": [...]}"}
		}
		seen := map[string]bool{}
		for _, id := range req.Instances {
			in := s.instances[id]
			if in == nil || in.poolID != p.id || in.state == InstanceDestroying || seen[id] {
				return nil, &apiError{http.StatusBadRequest, fmt.Sprintf("instance %s is not an active member of instance pool %s", id, p.id)}
			}
			seen[id] = true
		}
		apply = func() {
			for _, id := range req.Instances {
				s.destroyLocked(s.instances[id], now)
			}
			p.size -= len(req.Instances)
		}
	default:
		return nil, &apiError{http.StatusNotFound, "unknown action " + action}
	}
	op := &operation{id: s.newID(7), refID: refID, command: action, state: exoapi.OperationPending, final: exoapi.OperationSuccess, doneAt: now.Add(s.opts.OperationDelay)}
	later := false
	switch {
	case len(s.opFaults) > 0:
		f := s.opFaults[0]
		s.opFaults = s.opFaults[1:]
		op.final, op.reason, op.msg, later = f.state, f.reason, f.message, f.later
	case overQuota:
		op.final, op.reason, op.msg = exoapi.OperationFailure, "forbidden", "instance quota exceeded"
	case busy && s.opts.Busy == BusyQueue:
		op.queued, op.pool = apply, p
	default:
		apply()
	}
	if s.opts.OperationDelay <= 0 && op.queued == nil && !later {
		op.state = op.final
	}
	s.ops[op.id] = op
	return s.operationJSON(op), nil
}

func (s *Server) usageLocked() int64 {
	var n int64
	for _, in := range s.instances {
		if in.state != InstanceDestroying {
			n++
		}
	}
	return n
}

func (s *Server) cluster(id string) *cluster {
	for _, c := range s.clusters {
		if c.id == id {
			return c
		}
	}
	return nil
}

func (s *Server) nodepool(clusterID, id string) *nodepool {
	if c := s.cluster(clusterID); c != nil {
		for _, np := range c.nodepools {
			if np.id == id {
				return np
			}
		}
	}
	return nil
}

func (s *Server) clusterJSON(c *cluster) clusterJSON {
	out := clusterJSON{ID: c.id, Name: c.name, State: "running", Version: "1.34.1"}
	for _, np := range c.nodepools {
		out.Nodepools = append(out.Nodepools, s.nodepoolJSON(np))
	}
	return out
}

func (s *Server) nodepoolJSON(np *nodepool) nodepoolJSON {
	p := s.pools[np.poolID]
	state := NodepoolRunning
	if s.poolStateLocked(p) != PoolRunning {
		state = NodepoolScaling
	}
	out := nodepoolJSON{
		ID: np.id, Name: np.name, Size: p.size, State: state, InstancePool: &ref{p.id},
		Labels: np.labels, Template: &ref{"00000000-0000-4000-8000-00000000cafe"}, Version: "1.34.1", DiskSize: p.diskSize,
	}
	if p.typeID != "" {
		out.InstanceType = &ref{p.typeID}
	}
	if len(np.taints) > 0 {
		out.Taints = map[string]taint{}
		for _, t := range np.taints {
			out.Taints[t.Key] = taint{Value: t.Value, Effect: t.Effect}
		}
	}
	return out
}

func (s *Server) poolJSON(p *pool) poolJSON {
	out := poolJSON{ID: p.id, Name: p.name, Size: p.size, State: s.poolStateLocked(p), DiskSize: p.diskSize, Labels: p.labels}
	if p.nodepoolID != "" {
		out.Manager = &manager{ID: p.nodepoolID, Type: exoapi.ManagerTypeSKSNodepool}
	}
	if p.typeID != "" {
		out.InstanceType = &ref{p.typeID}
	}
	for _, m := range p.members {
		if !s.instances[m].unlisted {
			out.Instances = append(out.Instances, ref{m})
		}
	}
	return out
}

func (s *Server) instanceJSON(in *instance) instanceJSON {
	out := instanceJSON{ID: in.id, Name: in.name, State: in.listedState(), CreatedAt: in.createdAt.UTC().Format(time.RFC3339)}
	if in.poolID != "" {
		out.Manager = &manager{ID: in.poolID, Type: exoapi.ManagerTypeInstancePool}
	}
	if in.typeID != "" {
		out.InstanceType = &ref{in.typeID}
	}
	return out
}

func toTypeJSON(t *exoapi.InstanceType) typeJSON {
	return typeJSON{ID: t.ID, Family: t.Family, Size: t.Size, CPUs: t.CPUs, Memory: t.MemoryBytes, GPUs: t.GPUs, Authorized: true}
}

func (s *Server) operationJSON(op *operation) operationJSON {
	out := operationJSON{ID: op.id, State: op.state}
	if op.state == exoapi.OperationFailure || op.state == exoapi.OperationTimeout {
		out.Reason, out.Message = op.reason, op.msg
	}
	out.Reference.ID = op.refID
	out.Reference.Command = op.command
	out.Reference.Link = BasePath + "/instance-pool/" + op.refID
	return out
}

func (s *Server) quotaJSON() quotaJSON {
	return quotaJSON{Resource: exoapi.QuotaEntityInstance, Usage: s.usageLocked(), Limit: s.opts.QuotaLimit}
}

// verifySignature recomputes EXO2-HMAC-SHA256 as the SDK computes it: method
// and escaped path, body, values of single-valued query args sorted by name,
// an empty headers part, and the expiry.
func (s *Server) verifySignature(r *http.Request, body []byte) string {
	auth := r.Header.Get("Authorization")
	const scheme = "EXO2-HMAC-SHA256 "
	if !strings.HasPrefix(auth, scheme) {
		return "missing or malformed Authorization header"
	}
	fields := map[string]string{}
	for _, part := range strings.Split(strings.TrimPrefix(auth, scheme), ",") {
		k, v, _ := strings.Cut(part, "=")
		fields[k] = v
	}
	if fields["credential"] != s.opts.APIKey {
		return "unknown API key"
	}
	if fields["expires"] == "" {
		return "missing expiry"
	}
	var names []string
	for name, vals := range r.URL.Query() {
		if len(vals) == 1 {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	if got := fields["signed-query-args"]; got != strings.Join(names, ";") {
		return "signed query arguments do not match"
	}
	var values bytes.Buffer
	for _, n := range names {
		values.WriteString(r.URL.Query().Get(n))
	}
	msg := strings.Join([]string{r.Method + " " + r.URL.EscapedPath(), string(body), values.String(), "", fields["expires"]}, "\n")
	mac := hmac.New(sha256.New, []byte(s.opts.APISecret))
	mac.Write([]byte(msg))
	want := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	if !hmac.Equal([]byte(want), []byte(fields["signature"])) {
		return "invalid signature"
	}
	return ""
}
