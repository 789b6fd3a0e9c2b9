package volcapi

import (
	"fmt"
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine/volcapi/fakeapi"
)

func TestListInstanceTypesBatchesAndGPU(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	var ids []string
	for i := 0; i < 13; i++ {
		id := fmt.Sprintf("ecs.t%02d.large", i)
		ids = append(ids, id)
		env.fake.AddInstanceType(fakeapi.InstanceType{ID: id, CPUs: 2, MemoryMiB: 8192})
	}
	env.fake.AddInstanceType(fakeapi.InstanceType{ID: "ecs.gni2.3xlarge", CPUs: 12, MemoryMiB: 47104, GPUCount: 1, GPUModel: "NVIDIA A10"})
	ids = append(ids, "ecs.gni2.3xlarge")
	got, err := env.client.ListInstanceTypes(ctx5s(t), ids)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 14 {
		t.Fatalf("got %d types, want 14", len(got))
	}
	if n := env.fake.CountOperation(ActionDescribeInstanceTypes); n != 2 {
		t.Fatalf("%d calls, want 2 (batches of 10)", n)
	}
	var gpu InstanceType
	for _, it := range got {
		if it.ID == "ecs.gni2.3xlarge" {
			gpu = it
		}
	}
	if gpu.GPUCount != 1 || gpu.GPUModel != "NVIDIA A10" || gpu.CPUs != 12 || gpu.MemoryMiB != 47104 {
		t.Fatalf("gpu type = %+v", gpu)
	}
}

func TestRequestsCarryRegionAndService(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t)
	env.fake.AddGroup(fakeapi.Group{ID: "scg-a", Min: 0, Max: 5, Desired: 0, SubnetIDs: []string{"subnet-1"}})
	env.fake.AddSubnet(fakeapi.Subnet{ID: "subnet-1", ZoneID: "cn-shanghai-a"})
	ctx := ctx5s(t)
	if _, err := env.client.ListScalingGroups(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := env.client.ListSubnets(ctx, []string{"subnet-1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.client.ListInstanceTypes(ctx, []string{"ecs.g1.large"}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{ActionDescribeScalingGroups: "auto_scaling", ActionDescribeSubnets: "vpc", ActionDescribeInstanceTypes: "ecs"}
	for _, r := range env.fake.Requests() {
		service, region := fakeapi.SigningScope(r)
		if region != "cn-shanghai" {
			t.Errorf("%s signed for region %q", r.Operation, region)
		}
		if service != want[r.Operation] {
			t.Errorf("%s signed for service %q, want %q", r.Operation, service, want[r.Operation])
		}
	}
}
