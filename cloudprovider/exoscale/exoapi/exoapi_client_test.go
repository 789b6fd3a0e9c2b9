package exoapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/credential"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi/fakeapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
)

const (
	key    = "EXOclienttestkey00000000"
	secret = "client-test-secret-0000000000"
)

func instantSleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }

func newClient(t *testing.T, endpoint, sec string, retry bool) *exoapi.Client {
	t.Helper()
	opts := exoapi.Options{
		APIKey: credential.FixedCredential(key), APISecret: credential.FixedCredential(credential.Secret(sec)), Endpoint: endpoint,
		Build: registry.BuildOptions{UserAgent: "ca-provider-test/1.2"},
		// One attempt: the test sees each answer as the cloud gave it.
		Retry: cloudhttp.RetryOptions{MaxAttempts: 1},
	}
	if retry {
		opts.Retry = cloudhttp.RetryOptions{Sleep: instantSleep}
	}
	c, err := exoapi.New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

type seeded struct {
	fake                             *fakeapi.Server
	client                           *exoapi.Client
	cluster, nodepool, npPool, plain string
	empty, typeID                    string
	endpoint                         string
}

func seed(t *testing.T, opts fakeapi.Options, members int) *seeded {
	t.Helper()
	opts.APIKey, opts.APISecret = key, secret
	f := fakeapi.New(opts)
	watchSpec(t, f)
	s := &seeded{fake: f}
	s.typeID = f.AddInstanceType(exoapi.InstanceType{Family: "standard", Size: "small", CPUs: 2, MemoryBytes: 2 << 30})
	s.cluster = f.AddSKSCluster("prod")
	s.nodepool, s.npPool = f.AddNodepool(s.cluster, fakeapi.PoolSeed{
		Name: "workers", Size: members, InstanceTypeID: s.typeID, DiskSizeGiB: 50,
		Labels: map[string]string{"a": "b"}, Taints: []exoapi.Taint{{Key: "k", Value: "v", Effect: "NoSchedule"}},
	})
	s.plain = f.AddInstancePool(fakeapi.PoolSeed{Name: "batch", Size: 2, InstanceTypeID: s.typeID})
	s.empty = f.AddInstancePool(fakeapi.PoolSeed{Name: "empty", Size: 0, InstanceTypeID: s.typeID})
	// An instance outside every pool, which the member list leaves out.
	f.AddInstance("cp", s.typeID)
	s.endpoint = f.Start()
	t.Cleanup(f.Close)
	s.client = newClient(t, s.endpoint, secret, true)
	return s
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestListCallsDecode(t *testing.T) {
	t.Parallel()
	s := seed(t, fakeapi.Options{}, 3)
	clusters, err := s.client.ListSKSClusters(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(clusters) != 1 || len(clusters[0].Nodepools) != 1 {
		t.Fatalf("clusters %+v", clusters)
	}
	np := clusters[0].Nodepools[0]
	if np.ID != s.nodepool || np.ClusterID != s.cluster || np.InstancePoolID != s.npPool || np.Size != 3 ||
		np.InstanceTypeID != s.typeID || np.Labels["a"] != "b" || len(np.Taints) != 1 || np.Taints[0].Effect != "NoSchedule" || np.DiskSizeGiB != 50 {
		t.Fatalf("nodepool %+v", np)
	}
	pools, err := s.client.ListInstancePools(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]exoapi.InstancePool{}
	for _, p := range pools {
		byID[p.ID] = p
	}
	if p := byID[s.npPool]; p.ManagerType != exoapi.ManagerTypeSKSNodepool || p.ManagerID != s.nodepool || len(p.InstanceIDs) != 3 {
		t.Fatalf("nodepool's pool %+v", p)
	}
	if p := byID[s.plain]; p.ManagerType != "" || len(p.InstanceIDs) != 2 || p.State != "running" {
		t.Fatalf("plain pool %+v", p)
	}
	if p := byID[s.empty]; p.Size != 0 || p.InstanceIDs != nil {
		t.Fatalf("empty pool %+v: members should be absent", p)
	}
	members, err := s.client.ListPoolMembers(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(members) != 5 {
		t.Fatalf("%d pool members, want 5 (the unmanaged instance is filtered)", len(members))
	}
	for _, m := range members {
		if m.ManagerType != exoapi.ManagerTypeInstancePool || m.State != "running" || m.CreatedAt.IsZero() {
			t.Fatalf("member %+v", m)
		}
	}
	reqs := s.fake.Requests()
	if q := reqs[len(reqs)-1].Query.Encode(); q != "manager-type=instance-pool" {
		t.Fatalf("list members query %q", q)
	}
	q, err := s.client.GetQuota(ctx(t), exoapi.QuotaEntityInstance)
	if err != nil || q.Usage != 6 || q.Limit != 50 {
		t.Fatalf("GetQuota = %+v, %v", q, err)
	}
	it, err := s.client.GetInstanceType(ctx(t), s.typeID)
	if err != nil || it.Name() != "standard.small" || it.CPUs != 2 || it.MemoryBytes != 2<<30 {
		t.Fatalf("GetInstanceType = %+v, %v", it, err)
	}
}

// TestLargeList: Exoscale v2 list endpoints are not paginated; one response
// carries every item, and the client must take them all.
func TestLargeList(t *testing.T) {
	t.Parallel()
	s := seed(t, fakeapi.Options{}, 500)
	members, err := s.client.ListPoolMembers(ctx(t))
	if err != nil || len(members) != 502 {
		t.Fatalf("ListPoolMembers: %d members, %v; want 502", len(members), err)
	}
}

func TestMutationsReturnOperations(t *testing.T) {
	t.Parallel()
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := seed(t, fakeapi.Options{Now: func() time.Time { return clock }, OperationDelay: time.Second}, 2)
	op, err := s.client.ScaleSKSNodepool(ctx(t), s.cluster, s.nodepool, 4)
	if err != nil || op.State != exoapi.OperationPending || op.ReferenceID != s.nodepool || op.Done() {
		t.Fatalf("ScaleSKSNodepool = %+v, %v", op, err)
	}
	got, err := s.client.GetOperation(ctx(t), op.ID)
	if err != nil || got.State != exoapi.OperationPending {
		t.Fatalf("GetOperation = %+v, %v", got, err)
	}
	s.fake.Settle()
	got, _ = s.client.GetOperation(ctx(t), op.ID)
	if got.State != exoapi.OperationSuccess || !got.Done() {
		t.Fatalf("after settle operation is %+v", got)
	}
	p, _ := s.fake.Pool(s.plain)
	if _, err := s.client.EvictInstancePoolMembers(ctx(t), s.plain, []string{p.Members[0].ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.client.ScaleInstancePool(ctx(t), s.plain, 0); err != nil {
		t.Fatalf("scaling to zero must be accepted: %v", err)
	}
	np, _ := s.fake.Pool(s.npPool)
	if _, err := s.client.EvictSKSNodepoolMembers(ctx(t), s.cluster, s.nodepool, []string{np.Members[0].ID}); err != nil {
		t.Fatal(err)
	}
	if p, _ := s.fake.Pool(s.npPool); p.Size != 3 {
		t.Fatalf("nodepool size after scale 4 and one eviction = %d", p.Size)
	}
}

// TestErrorClassification: every status maps to its sentinel through the
// recorded status code, keeps the server message, and exposes the status.
func TestErrorClassification(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status int
		want   error
	}{
		{400, cloudprovider.ErrFailedPrecondition},
		{401, cloudprovider.ErrUnauthenticated},
		{403, cloudprovider.ErrPermissionDenied},
		{404, cloudprovider.ErrNotFound},
		{409, cloudprovider.ErrFailedPrecondition},
		{429, cloudprovider.ErrRateLimited},
		{500, cloudprovider.ErrUnavailable},
		{502, cloudprovider.ErrUnavailable},
		{503, cloudprovider.ErrUnavailable},
		{504, cloudprovider.ErrUnavailable},
	} {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			t.Parallel()
			s := seed(t, fakeapi.Options{}, 1)
			for i := 0; i < 4; i++ {
				s.fake.AddFault(fakecloud.Fault{Status: tc.status, Message: "server says no", RetryAfter: "3600"})
			}
			_, err := s.client.ListInstancePools(ctx(t))
			if !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
			if got := exoapi.StatusCode(err); got != tc.status {
				t.Fatalf("StatusCode = %d, want %d", got, tc.status)
			}
			var apiErr *cloudhttp.APIError
			if !errors.As(err, &apiErr) || apiErr.Message != "server says no" || apiErr.Operation != "ListInstancePools" {
				t.Fatalf("APIError %+v", apiErr)
			}
		})
	}
}

func TestMalformedAndTimeout(t *testing.T) {
	t.Parallel()
	s := seed(t, fakeapi.Options{}, 1)
	s.fake.AddFault(fakecloud.Fault{Malformed: true})
	if _, err := s.client.ListSKSClusters(ctx(t)); !errors.Is(err, cloudprovider.ErrMalformedResponse) || exoapi.StatusCode(err) != 200 {
		t.Fatalf("malformed body: %v", err)
	}
	s.fake.AddFault(fakecloud.Fault{Hang: true})
	c, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := s.client.ListSKSClusters(c); !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, cloudprovider.ErrUnavailable) {
		t.Fatalf("hung request: %v", err)
	}
}

// TestJSONLabelledTextPlainIsAccepted: a gateway may relabel the answer;
// the body decides, not the label.
func TestJSONLabelledTextPlainIsAccepted(t *testing.T) {
	t.Parallel()
	s := seed(t, fakeapi.Options{}, 1)
	body := `{"instance-pools":[{"id":"` + s.plain + `","name":"relabelled","state":"running","size":1}]}`
	s.fake.AddFault(fakecloud.Fault{Method: http.MethodGet, PathContains: "/instance-pool", Status: 200, Body: &body, ContentType: "text/plain; charset=utf-8"})
	pools, err := s.client.ListInstancePools(ctx(t))
	if err != nil || len(pools) != 1 || pools[0].Name != "relabelled" || pools[0].Size != 1 {
		t.Fatalf("JSON labelled text/plain: %+v, %v; want it read", pools, err)
	}
}

// TestUnparsableAnswerNamesCloudOperationStatus: a success body that does
// not parse is an error naming cloud, operation and status; for a mutation
// the cloud took it (applied), never a refusal or unknown.
func TestUnparsableAnswerNamesCloudOperationStatus(t *testing.T) {
	t.Parallel()
	s := seed(t, fakeapi.Options{}, 1)
	html := "<html>accepted</html>"
	s.fake.AddFault(fakecloud.Fault{Method: http.MethodPut, Status: 202, Body: &html, ContentType: "text/html", AfterApply: true})
	_, err := s.client.ScaleInstancePool(ctx(t), s.plain, 2)
	if !errors.Is(err, cloudprovider.ErrMalformedResponse) || cloudprovider.OutcomeOf(err) != cloudprovider.MutationApplied {
		t.Fatalf("unparsable 202: %v (outcome %s), want malformed and applied", err, cloudprovider.OutcomeOf(err))
	}
	for _, want := range []string{"exoscale", "ScaleInstancePool", "HTTP 202"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not name %q", err, want)
		}
	}
}

// TestMutationOutcomes: the client states each answer's outcome from the
// status the shared stack recorded.
func TestMutationOutcomes(t *testing.T) {
	t.Parallel()
	empty := ""
	for _, tc := range []struct {
		name  string
		fault fakecloud.Fault
		want  cloudprovider.MutationOutcome
	}{
		{"400", fakecloud.Fault{Status: 400}, cloudprovider.MutationRefused},
		{"403", fakecloud.Fault{Status: 403}, cloudprovider.MutationRefused},
		{"500 every attempt", fakecloud.Fault{Status: 500, Times: 10}, cloudprovider.MutationUnknown},
		{"reset every attempt", fakecloud.Fault{Reset: true, Times: 10}, cloudprovider.MutationUnknown},
		{"empty 200", fakecloud.Fault{Status: 200, Body: &empty, AfterApply: true}, cloudprovider.MutationApplied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := seed(t, fakeapi.Options{}, 1)
			tc.fault.Method = http.MethodPut
			s.fake.AddFault(tc.fault)
			_, err := s.client.ScaleInstancePool(ctx(t), s.plain, 2)
			if err == nil || cloudprovider.OutcomeOf(err) != tc.want {
				t.Fatalf("%v: outcome %s, want %s", err, cloudprovider.OutcomeOf(err), tc.want)
			}
		})
	}
}

func TestEmptyObjectIsNotFound(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(srv.Close)
	c := newClient(t, srv.URL+"/v2", secret, false)
	if _, err := c.GetInstancePool(ctx(t), "00000000-0000-4000-8000-000000000001"); !errors.Is(err, cloudprovider.ErrNotFound) {
		t.Fatalf("GetInstancePool of an empty object: %v, want ErrNotFound", err)
	}
}

func TestSignatureAndUserAgent(t *testing.T) {
	t.Parallel()
	s := seed(t, fakeapi.Options{}, 1)
	if _, err := s.client.ListPoolMembers(ctx(t)); err != nil {
		t.Fatalf("signed request with query args rejected: %v", err)
	}
	if _, err := s.client.ScaleInstancePool(ctx(t), s.plain, 3); err != nil {
		t.Fatalf("signed request with body rejected: %v", err)
	}
	reqs := s.fake.Requests()
	ua := reqs[len(reqs)-1].Header.Get("User-Agent")
	if !strings.HasPrefix(ua, "ca-provider-test/1.2 cluster-autoscaler-provider-exoscale egoscale/") {
		t.Fatalf("User-Agent %q", ua)
	}
	bad := newClient(t, s.endpoint, "wrong-secret", false)
	_, err := bad.ListInstancePools(ctx(t))
	if !errors.Is(err, cloudprovider.ErrUnauthenticated) {
		t.Fatalf("wrong secret: %v, want ErrUnauthenticated", err)
	}
	if strings.Contains(err.Error(), "wrong-secret") || strings.Contains(err.Error(), secret) {
		t.Fatalf("error leaks a secret: %v", err)
	}
}

func TestNewValidates(t *testing.T) {
	t.Parallel()
	_, err := exoapi.New(exoapi.Options{Endpoint: "ftp://x"})
	if err == nil {
		t.Fatal("New accepted an empty configuration")
	}
	for _, want := range []string{"key and secret", "endpoint"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not mention %q", err, want)
		}
	}
}

// TestRotatedKeyFileIsUsed: egoscale copies the key pair into its client,
// so the client is rebuilt when a key file changes; the next request is
// signed with the new key (the fake, which knows only the old pair, then
// refuses it).
func TestRotatedKeyFileIsUsed(t *testing.T) {
	t.Parallel()
	s := seed(t, fakeapi.Options{}, 1)
	dir := t.TempDir()
	keyPath, secretPath := filepath.Join(dir, "key"), filepath.Join(dir, "secret")
	write := func(path, value string, mod time.Time) {
		t.Helper()
		if err := os.WriteFile(path, []byte(value), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	base := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	write(keyPath, key, base)
	write(secretPath, secret, base)
	apiKey, err := credential.FileCredential("EXOSCALE_API_KEY_FILE=", keyPath)
	if err != nil {
		t.Fatal(err)
	}
	apiSecret, err := credential.FileCredential("EXOSCALE_API_SECRET_FILE=", secretPath)
	if err != nil {
		t.Fatal(err)
	}
	c, err := exoapi.New(exoapi.Options{APIKey: apiKey, APISecret: apiSecret, Endpoint: s.endpoint,
		Build: registry.BuildOptions{UserAgent: "t"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListInstancePools(ctx(t)); err != nil {
		t.Fatalf("before rotation: %v", err)
	}
	const rotatedKey = "EXOrotatedkey000000000000"
	write(keyPath, rotatedKey, base.Add(time.Minute))
	write(secretPath, "rotated-secret", base.Add(time.Minute))
	if _, err := c.ListInstancePools(ctx(t)); !errors.Is(err, cloudprovider.ErrUnauthenticated) {
		t.Fatalf("after rotation to a pair the fake does not know: %v, want ErrUnauthenticated", err)
	}
	reqs := s.fake.Requests()
	if auth := reqs[len(reqs)-1].Header.Get("Authorization"); !strings.Contains(auth, rotatedKey) {
		t.Fatalf("after rotation the request is signed with %q", auth)
	}
}
