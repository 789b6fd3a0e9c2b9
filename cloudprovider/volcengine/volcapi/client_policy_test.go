package volcapi

import (
	"context"
	"os"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine/volcapi/fakeapi"
)

// examplePolicy is the IAM policy the deployment example ships.
const examplePolicy = "../../../examples/volcengine/iam-policy.json"

// TestExamplePolicyGrantsExactlyWhatTheClientCalls calls every API method of
// the client against a fake enforcing the example policy and checks that the
// actions sent are exactly those the policy allows: an action the client
// calls that the policy lacks is refused (403 AccessDenied), one the policy
// lists that the client never calls is named, and a new client method fails
// until it is called here.
func TestExamplePolicyGrantsExactlyWhatTheClientCalls(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(examplePolicy)
	if err != nil {
		t.Fatal(err)
	}
	policy, err := fakeapi.ParsePolicy(data)
	if err != nil {
		t.Fatalf("%s: %v", examplePolicy, err)
	}
	clock := fakecloud.NewManualClock(time.Unix(1_800_000_000, 0))
	env := newTestEnvWith(t, fakeapi.Options{Now: clock.Now, Policy: policy})
	f := env.fake
	f.AddInstanceType(fakeapi.InstanceType{ID: "ecs.g3i.large", CPUs: 2, MemoryMiB: 8192})
	f.AddImage(fakeapi.Image{ID: "image-1", Architecture: "amd64", OSType: "Linux"})
	f.AddSubnet(fakeapi.Subnet{ID: "subnet-1", ZoneID: "cn-shanghai-a"})
	f.AddGroup(fakeapi.Group{ID: "scg-1", Min: 0, Max: 5, Desired: 2, ActiveConfigID: "scc-1", SubnetIDs: []string{"subnet-1"}})
	f.AddConfiguration(fakeapi.Configuration{ID: "scc-1", GroupID: "scg-1", InstanceTypes: []string{"ecs.g3i.large"}, ImageID: "image-1"})
	victim := f.AddInstance("scg-1", fakeapi.StatusInService)
	f.AddInstance("scg-1", fakeapi.StatusInService)

	calls := []struct {
		method string
		call   func(ctx context.Context, c *Client) error
	}{
		{"ListScalingGroups", func(ctx context.Context, c *Client) error {
			_, err := c.ListScalingGroups(ctx, []string{"scg-1"})
			return err
		}},
		{"ScalingGroupsPage", func(ctx context.Context, c *Client) error { _, err := c.ScalingGroupsPage(ctx, 1); return err }},
		{"ListScalingInstances", func(ctx context.Context, c *Client) error {
			_, err := c.ListScalingInstances(ctx, "scg-1")
			return err
		}},
		{"ListScalingConfigurations", func(ctx context.Context, c *Client) error {
			_, err := c.ListScalingConfigurations(ctx, []string{"scc-1"})
			return err
		}},
		{"ActivitiesSince", func(ctx context.Context, c *Client) error {
			_, err := c.ActivitiesSince(ctx, "scg-1", time.Time{})
			return err
		}},
		{"SetDesiredInstances", func(ctx context.Context, c *Client) error { return c.SetDesiredInstances(ctx, "scg-1", 3) }},
		{"RemoveInstances", func(ctx context.Context, c *Client) error {
			_, err := c.RemoveInstances(ctx, "scg-1", []string{victim}, true)
			return err
		}},
		{"ListInstanceTypes", func(ctx context.Context, c *Client) error {
			_, err := c.ListInstanceTypes(ctx, []string{"ecs.g3i.large"})
			return err
		}},
		{"ListImages", func(ctx context.Context, c *Client) error {
			_, err := c.ListImages(ctx, []string{"image-1"})
			return err
		}},
		{"ListSubnets", func(ctx context.Context, c *Client) error {
			_, err := c.ListSubnets(ctx, []string{"subnet-1"})
			return err
		}},
	}
	called := map[string]bool{}
	for _, c := range calls {
		if err := c.call(ctx5s(t), env.client); err != nil {
			t.Errorf("%s under the example policy: %v", c.method, err)
		}
		called[c.method] = true
	}
	ctxType := reflect.TypeFor[context.Context]()
	client := reflect.TypeFor[*Client]()
	for i := range client.NumMethod() {
		m := client.Method(i)
		if m.Type.NumIn() > 1 && m.Type.In(1) == ctxType && !called[m.Name] {
			t.Errorf("Client.%s calls the API but this test does not call it: add it, and its action to %s", m.Name, examplePolicy)
		}
	}
	var sent []string
	for action := range f.OperationCounts() {
		perm := fakeapi.Permission(action)
		if perm == "" {
			t.Errorf("the client sent action %q, which the fake does not serve", action)
		}
		sent = append(sent, perm)
	}
	slices.Sort(sent)
	if granted := policy.Granted(); !slices.Equal(sent, granted) {
		t.Errorf("the client calls %q\nthe example policy allows %q", sent, granted)
	}
}
