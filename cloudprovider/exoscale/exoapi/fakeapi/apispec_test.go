package fakeapi

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud/apispec"
)

// TestEveryAnswerMatchesTheDescription sends every route the fake serves,
// in every state its answers have (pools and nodepools running and busy,
// members in each state, operations pending, successful, failed and timed
// out) and its error answers, through the description check: every request
// and answer must be one Exoscale's description declares.
func TestEveryAnswerMatchesTheDescription(t *testing.T) {
	t.Parallel()
	spec, err := apispec.Exoscale()
	if err != nil {
		t.Fatal(err)
	}
	cov := apispec.NewCoverage()
	c := fakecloud.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s := New(Options{Now: c.Now, ProvisionDelay: time.Minute, RemovalDelay: time.Minute, OperationDelay: time.Minute, Busy: BusyRefuse})
	apispec.WatchFake(t, s.API, spec, cov)
	typ := s.AddInstanceType(exoapi.InstanceType{Family: "gpua5000", Size: "small", CPUs: 12, MemoryBytes: 56 << 30, GPUs: 1})
	cluster := s.AddSKSCluster("prod")
	np, npPool := s.AddNodepool(cluster, PoolSeed{
		Name: "gpu", Size: 2, InstanceTypeID: typ, DiskSizeGiB: 100, Labels: map[string]string{"role": "gpu"},
		Taints: []exoapi.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: "NoSchedule"}},
	})
	plain := s.AddInstancePool(PoolSeed{Name: "batch", Size: 1, InstanceTypeID: typ, Labels: map[string]string{"team": "a"}})
	empty := s.AddInstancePool(PoolSeed{Name: "empty", Size: 0, InstanceTypeID: typ})
	loose := s.AddInstance("control-plane", typ)
	base := s.Start()
	t.Cleanup(s.Close)
	p, _ := s.Pool(npPool)
	member := p.Members[0].ID

	send := func(method, path, body string, want int) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("%s %s: status %d, want %d", method, path, resp.StatusCode, want)
		}
	}
	reads := func() {
		t.Helper()
		for _, path := range []string{
			"/sks-cluster", "/sks-cluster/" + cluster, "/sks-cluster/" + cluster + "/nodepool/" + np,
			"/instance-pool", "/instance-pool/" + plain, "/instance-pool/" + empty, "/instance-pool/" + npPool,
			"/instance", "/instance?manager-type=instance-pool", "/instance?manager-type=instance-pool&manager-id=" + plain,
			"/instance/" + loose, "/instance-type", "/instance-type/" + typ, "/quota", "/quota/instance",
		} {
			send(http.MethodGet, path, "", http.StatusOK)
		}
	}
	reads()
	send(http.MethodGet, "/instance/"+member, "", http.StatusOK)
	// Busy: pools scaling, members starting, an operation pending.
	send(http.MethodPut, "/instance-pool/"+plain+":scale", `{"size":3}`, http.StatusOK)
	send(http.MethodPut, "/sks-cluster/"+cluster+"/nodepool/"+np+":scale", `{"size":3}`, http.StatusOK)
	reads()
	// The busy pools refuse (BusyRefuse).
	send(http.MethodPut, "/instance-pool/"+plain+":scale", `{"size":4}`, http.StatusConflict)
	for _, op := range s.operationIDs() {
		send(http.MethodGet, "/operation/"+op, "", http.StatusOK)
	}
	c.Advance(2 * time.Minute)
	reads()
	send(http.MethodPut, "/sks-cluster/"+cluster+"/nodepool/"+np+":evict", `{"instances":["`+member+`"]}`, http.StatusOK)
	pp, _ := s.Pool(plain)
	send(http.MethodPut, "/instance-pool/"+plain+":evict", `{"instances":["`+pp.Members[0].ID+`"]}`, http.StatusOK)
	reads()
	c.Advance(2 * time.Minute)
	s.FailNextOperation(exoapi.OperationFailure, "forbidden", "instance quota exceeded")
	send(http.MethodPut, "/instance-pool/"+plain+":scale", `{"size":2}`, http.StatusOK)
	c.Advance(2 * time.Minute)
	s.FailNextOperation(exoapi.OperationTimeout, "", "")
	send(http.MethodPut, "/instance-pool/"+empty+":scale", `{"size":0}`, http.StatusOK)
	c.Advance(2 * time.Minute)
	s.SetInstanceState(loose, InstanceError)
	reads()
	for _, op := range s.operationIDs() {
		send(http.MethodGet, "/operation/"+op, "", http.StatusOK)
	}
	// Error answers.
	unknown := "00000000-0000-4000-8000-000000000bad"
	for _, path := range []string{"/sks-cluster/" + unknown, "/instance-pool/" + unknown, "/instance/" + unknown, "/instance-type/" + unknown, "/operation/" + unknown} {
		send(http.MethodGet, path, "", http.StatusNotFound)
	}
	send(http.MethodPut, "/instance-pool/"+npPool+":scale", `{"size":1}`, http.StatusForbidden)
	send(http.MethodPut, "/instance-pool/"+plain+":scale", `{"size":-1}`, http.StatusBadRequest)
	send(http.MethodPut, "/instance-pool/"+plain+":evict", `{"instances":["`+unknown+`"]}`, http.StatusBadRequest)
	s.SetQuotaLimit(1)
	send(http.MethodPut, "/instance-pool/"+plain+":scale", `{"size":40}`, http.StatusBadRequest)
	s.Close()

	// Every route the fake serves was answered at least once with a 2xx.
	served := map[string]bool{}
	for _, op := range cov.Operations() {
		served[op] = true
	}
	for _, op := range []string{
		"list-sks-clusters", "get-sks-cluster", "get-sks-nodepool", "scale-sks-nodepool", "evict-sks-nodepool-members",
		"list-instance-pools", "get-instance-pool", "scale-instance-pool", "evict-instance-pool-members", "list-instances", "get-instance",
		"list-quotas", "get-quota", "list-instance-types", "get-instance-type", "get-operation",
	} {
		if !served[op] {
			t.Errorf("operation %s was not exercised", op)
		}
	}
}

// operationIDs lists the operations the fake holds.
func (s *Server) operationIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sortedKeys(s.ops)
}
