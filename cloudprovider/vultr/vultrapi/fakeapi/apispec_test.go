package fakeapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud/apispec"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr/vultrapi/fakeapi"
)

// TestEveryAnswerMatchesTheDescription sends every route the fake serves,
// with pools and nodes in each state its answers have, pages, and its error
// answers, through the description check: every request and answer must be
// one Vultr's description (with its known differences) declares, and a
// request the description refuses must be refused.
func TestEveryAnswerMatchesTheDescription(t *testing.T) {
	t.Parallel()
	spec, err := apispec.Vultr()
	if err != nil {
		t.Fatal(err)
	}
	cov := apispec.NewCoverage()
	s, clock := newFake(t, fakeapi.Options{AppearAfter: time.Second, ActiveAfter: time.Minute, Busy: fakeapi.BusyRefuse, MaxPerPage: 2})
	apispec.WatchFake(t, s.API, spec, cov)
	if _, err := s.AddPool(cid, fakeapi.PoolSpec{ID: "p1", Label: "web", Plan: "vc2-1c-2gb", Quantity: 2, Min: 1, Max: 5, AutoScaler: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddPool(cid, fakeapi.PoolSpec{ID: "p2", Label: "gpu", Plan: "vcg-a16-2c-8g-2vram", Quantity: 1, Min: 0, Max: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddPool(cid, fakeapi.PoolSpec{ID: "p3", Label: "batch", Plan: "vc2-1c-2gb", Quantity: 1, Min: 1, Max: 2}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetPoolLabels(cid, "p2", map[string]string{"role": "gpu"}, []fakeapi.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: "NoSchedule"}}); err != nil {
		t.Fatal(err)
	}
	s.Settle()
	send := func(method, path, body string, want int) {
		t.Helper()
		req, _ := http.NewRequest(method, s.URL()+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
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
	cluster := "/v2/kubernetes/clusters/" + cid
	reads := func() {
		t.Helper()
		for _, path := range []string{
			cluster, cluster + "/node-pools", cluster + "/node-pools?per_page=1", cluster + "/node-pools/p1", cluster + "/node-pools/p2",
			cluster + "/node-pools/p1/nodes", cluster + "/node-pools/p2/labels", cluster + "/node-pools/p2/taints",
			"/v2/plans", "/v2/plans?type=vcg&per_page=2", "/v2/plans-metal?per_page=1",
		} {
			send(http.MethodGet, path, "", http.StatusOK)
		}
	}
	reads()
	// Growing: nodes pending, then appearing, the pool busy.
	send(http.MethodPatch, cluster+"/node-pools/p1", `{"node_quantity":4}`, http.StatusAccepted)
	reads()
	send(http.MethodPatch, cluster+"/node-pools/p1", `{"node_quantity":3}`, http.StatusBadRequest)
	clock.Advance(2 * time.Second)
	reads()
	clock.Advance(2 * time.Minute)
	reads()
	p, _ := s.Pool(cid, "p1")
	send(http.MethodDelete, cluster+"/node-pools/p1/nodes/"+p.Nodes[0].ID, "", http.StatusNoContent)
	reads()
	send(http.MethodPatch, cluster+"/node-pools/p3", `{"node_quantity":2,"min_nodes":1,"max_nodes":3,"auto_scaler":true,"tag":"t"}`, http.StatusAccepted)
	// Error answers.
	send(http.MethodGet, "/v2/kubernetes/clusters/nope", "", http.StatusNotFound)
	send(http.MethodGet, cluster+"/node-pools/nope", "", http.StatusNotFound)
	send(http.MethodDelete, cluster+"/node-pools/p1/nodes/nope", "", http.StatusNotFound)
	send(http.MethodPatch, cluster+"/node-pools/p3", `{"node_quantity":0}`, http.StatusBadRequest)
	send(http.MethodPatch, cluster+"/node-pools/p3", `{"node_quantity":"two"}`, http.StatusBadRequest)
	send(http.MethodGet, "/v2/plans?cursor=zzz", "", http.StatusBadRequest)
	s.SetToken("rotated")
	send(http.MethodGet, cluster, "", http.StatusUnauthorized)
	s.Close()

	served := map[string]bool{}
	for _, op := range cov.Operations() {
		served[op] = true
	}
	for _, op := range []string{
		"get-kubernetes-clusters", "get-nodepools", "get-nodepool", "update-nodepool", "delete-nodepool-instance",
		"list-plans", "list-metal-plans", "list-nodepool-nodes", "list-nodepool-labels", "list-nodepool-taints",
	} {
		if !served[op] {
			t.Errorf("operation %s was not exercised", op)
		}
	}
}
