package exoapi_test

import (
	"context"
	"os"
	"reflect"
	"slices"
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi/fakeapi"
)

// examplePolicy is the role policy the deployment example ships.
const examplePolicy = "../../../examples/exoscale/iam-role-policy.json"

// TestExamplePolicyGrantsExactlyWhatTheClientCalls calls every API method of
// the client against a fake enforcing the example role policy and checks
// that the IAM operations sent are exactly those the policy allows: an
// operation the client calls that the policy lacks is refused (403), one the
// policy lists that the client never calls is named, and a new client
// method fails until it is called here.
func TestExamplePolicyGrantsExactlyWhatTheClientCalls(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(examplePolicy)
	if err != nil {
		t.Fatal(err)
	}
	policy, err := fakeapi.ParseRolePolicy(data)
	if err != nil {
		t.Fatalf("%s: %v", examplePolicy, err)
	}
	s := seed(t, fakeapi.Options{Policy: policy}, 2)
	members := func(pool string) []string {
		p, _ := s.fake.Pool(pool)
		return []string{p.Members[0].ID}
	}
	var opID string
	calls := []struct {
		method string
		call   func(ctx context.Context, c *exoapi.Client) error
	}{
		{"ListSKSClusters", func(ctx context.Context, c *exoapi.Client) error { _, err := c.ListSKSClusters(ctx); return err }},
		{"ListInstancePools", func(ctx context.Context, c *exoapi.Client) error { _, err := c.ListInstancePools(ctx); return err }},
		{"GetInstancePool", func(ctx context.Context, c *exoapi.Client) error {
			_, err := c.GetInstancePool(ctx, s.plain)
			return err
		}},
		{"ListPoolMembers", func(ctx context.Context, c *exoapi.Client) error { _, err := c.ListPoolMembers(ctx); return err }},
		{"GetQuota", func(ctx context.Context, c *exoapi.Client) error {
			_, err := c.GetQuota(ctx, exoapi.QuotaEntityInstance)
			return err
		}},
		{"GetInstanceType", func(ctx context.Context, c *exoapi.Client) error {
			_, err := c.GetInstanceType(ctx, s.typeID)
			return err
		}},
		{"ScaleInstancePool", func(ctx context.Context, c *exoapi.Client) error {
			op, err := c.ScaleInstancePool(ctx, s.plain, 3)
			opID = op.ID
			return err
		}},
		{"EvictInstancePoolMembers", func(ctx context.Context, c *exoapi.Client) error {
			_, err := c.EvictInstancePoolMembers(ctx, s.plain, members(s.plain))
			return err
		}},
		{"ScaleSKSNodepool", func(ctx context.Context, c *exoapi.Client) error {
			_, err := c.ScaleSKSNodepool(ctx, s.cluster, s.nodepool, 3)
			return err
		}},
		{"EvictSKSNodepoolMembers", func(ctx context.Context, c *exoapi.Client) error {
			_, err := c.EvictSKSNodepoolMembers(ctx, s.cluster, s.nodepool, members(s.npPool))
			return err
		}},
		{"GetOperation", func(ctx context.Context, c *exoapi.Client) error { _, err := c.GetOperation(ctx, opID); return err }},
	}
	called := map[string]bool{}
	for _, c := range calls {
		s.fake.Settle()
		if err := c.call(ctx(t), s.client); err != nil {
			t.Errorf("%s under the example policy: %v", c.method, err)
		}
		called[c.method] = true
	}
	ctxType := reflect.TypeFor[context.Context]()
	client := reflect.TypeFor[*exoapi.Client]()
	for i := range client.NumMethod() {
		m := client.Method(i)
		if m.Type.NumIn() > 1 && m.Type.In(1) == ctxType && !called[m.Name] {
			t.Errorf("Client.%s calls the API but this test does not call it: add it, and its IAM operation to %s", m.Name, examplePolicy)
		}
	}
	var sent []string
	for op := range s.fake.OperationCounts() {
		name := exoapi.IAMOperation(op)
		if name == "" {
			t.Errorf("the client sent %s, which has no IAM operation in exoapi.IAMOperation", op)
		}
		if !slices.Contains(sent, name) {
			sent = append(sent, name)
		}
	}
	slices.Sort(sent)
	if granted := policy.Granted(); !slices.Equal(sent, granted) {
		t.Errorf("the client calls %q\nthe example policy allows %q", sent, granted)
	}
}
