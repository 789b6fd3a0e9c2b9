package volcapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/credential"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine/volcapi/fakeapi"
)

const (
	testAK = "AKLTtestaccesskey0001"
	testSK = "c2VjcmV0LXNlY3JldC1zZWNyZXQ="
)

type testEnv struct {
	fake   *fakeapi.Server
	client *Client
	sleeps []time.Duration
}

// newTestEnv starts a fake API and a client with our production transport
// stack (NewHTTPClient) whose retry sleeps are recorded, not slept.
func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	return newTestEnvWith(t, fakeapi.Options{Now: fakecloud.NewManualClock(time.Unix(1_800_000_000, 0)).Now})
}

// newTestEnvWith is newTestEnv with the fake's options.
func newTestEnvWith(t *testing.T, opts fakeapi.Options) *testEnv {
	t.Helper()
	env := &testEnv{fake: fakeapi.New(opts)}
	watchSpec(t, env.fake)
	url := env.fake.Start()
	t.Cleanup(env.fake.Close)
	c, err := New(Config{Region: "cn-shanghai", AccessKey: credential.FixedCredential(testAK), SecretKey: credential.FixedCredential(testSK), Endpoint: url,
		Build: registry.BuildOptions{UserAgent: "test"},
		Retry: cloudhttp.RetryOptions{
			MaxAttempts: 3,
			Sleep: func(ctx context.Context, d time.Duration) error {
				env.sleeps = append(env.sleeps, d)
				return nil
			},
		}})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	env.client = c
	return env
}

func ctx5s(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestNewValidates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{name: "all missing", cfg: Config{}, wantErr: "region, access key, secret key, endpoint"},
		{name: "ok", cfg: Config{Region: "r", AccessKey: credential.FixedCredential("a"), SecretKey: credential.FixedCredential("s"), Endpoint: "e"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := New(tc.cfg)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("New error = %v, want containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestNewLeavesDefaultClientAlone(t *testing.T) {
	t.Parallel()
	before := http.DefaultClient.Transport
	beforeProxy := fmt.Sprintf("%p", http.DefaultTransport.(*http.Transport).Proxy)
	env := newTestEnv(t)
	if _, err := env.client.ListScalingGroups(ctx5s(t), nil); err != nil {
		t.Fatal(err)
	}
	if http.DefaultClient.Transport != before {
		t.Fatalf("http.DefaultClient.Transport changed from %v to %v", before, http.DefaultClient.Transport)
	}
	if got := fmt.Sprintf("%p", http.DefaultTransport.(*http.Transport).Proxy); got != beforeProxy {
		t.Fatalf("http.DefaultTransport.Proxy was replaced")
	}
}

func TestConfigStringRedactsKeys(t *testing.T) {
	t.Parallel()
	cfg := Config{Region: "cn-beijing", AccessKey: credential.FixedCredential(testAK), SecretKey: credential.FixedCredential(testSK), Endpoint: "open.volcengineapi.com"}
	for _, format := range []string{"%v", "%+v", "%s", "%#v"} {
		out := fmt.Sprintf(format, cfg)
		if strings.Contains(out, testAK) || strings.Contains(out, testSK) {
			t.Errorf("%s leaks a key: %s", format, out)
		}
		if !strings.Contains(out, "cn-beijing") {
			t.Errorf("%s lost the region: %s", format, out)
		}
	}
}

func TestOperation(t *testing.T) {
	t.Parallel()
	req, _ := http.NewRequest(http.MethodGet, "http://x/?Action=DescribeScalingGroups&ScalingGroupIds.1=scg-abc&Version=2020-01-01", nil)
	if got := Operation(req); got != "GET /?Action=DescribeScalingGroups" {
		t.Fatalf("Operation = %q", got)
	}

}

// TestRotatedKeyFileIsUsed: keys from files are re-read when a file
// changes (a rotated Kubernetes Secret), without rebuilding the client.
func TestRotatedKeyFileIsUsed(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	dir := t.TempDir()
	akPath, skPath := filepath.Join(dir, "ak"), filepath.Join(dir, "sk")
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
	write(akPath, "AKLTfirstkey", base)
	write(skPath, testSK, base)
	ak, err := credential.FileCredential("access-key-file", akPath)
	if err != nil {
		t.Fatal(err)
	}
	sk, err := credential.FileCredential("secret-key-file", skPath)
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Config{Region: "cn-shanghai", AccessKey: ak, SecretKey: sk, Endpoint: env.fake.URL(), Build: registry.BuildOptions{UserAgent: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	signedWith := func() string {
		t.Helper()
		if _, err := c.ListScalingGroups(ctx5s(t), nil); err != nil {
			t.Fatal(err)
		}
		reqs := env.fake.Requests()
		return reqs[len(reqs)-1].Header.Get("Authorization")
	}
	if got := signedWith(); !strings.Contains(got, "AKLTfirstkey") {
		t.Fatalf("first request signed with %q", got)
	}
	write(akPath, "AKLTsecondkey", base.Add(time.Minute))
	if got := signedWith(); !strings.Contains(got, "AKLTsecondkey") {
		t.Fatalf("after rotation the request is signed with %q", got)
	}
}

// TestLocalRateLimitIsRateLimited: a call the client-side budget refuses
// comes back through the SDK as rate limited with a known outcome, not as
// an unreachable cloud, and never reaches the API.
func TestLocalRateLimitIsRateLimited(t *testing.T) {
	t.Parallel()
	fake := fakeapi.New(fakeapi.Options{Now: fakecloud.NewManualClock(time.Unix(1_800_000_000, 0)).Now})
	watchSpec(t, fake)
	url := fake.Start()
	t.Cleanup(fake.Close)
	c, err := New(Config{Region: "cn-shanghai", AccessKey: credential.FixedCredential(testAK), SecretKey: credential.FixedCredential(testSK), Endpoint: url,
		Build: registry.BuildOptions{UserAgent: "test", RateLimit: cloudhttp.RateLimit{Rate: 0.001, Burst: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListScalingGroups(ctx5s(t), nil); err != nil {
		t.Fatal(err)
	}
	calls := fake.RequestCount()
	_, err = c.ListScalingGroups(ctx5s(t), nil)
	if !errors.Is(err, cloudprovider.ErrRateLimited) || errors.Is(err, cloudprovider.ErrUnavailable) || cloudprovider.OutcomeUnknown(err) {
		t.Fatalf("over budget: %v, want rate limited with a known outcome", err)
	}
	if fake.RequestCount() != calls {
		t.Fatal("a call refused locally reached the API")
	}
}
