package fakeapi

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud/apispec"
)

// TestEveryAnswerMatchesTheMetadata sends every action the fake serves, with
// groups, instances and activities in each state its answers have, pages,
// and its error answers, through the metadata check: every parameter must
// be one the action declares, every answer field one its response tree
// has, and a request the metadata refuses must be refused.
func TestEveryAnswerMatchesTheMetadata(t *testing.T) {
	t.Parallel()
	meta, err := apispec.Volcengine()
	if err != nil {
		t.Fatal(err)
	}
	cov := apispec.NewCoverage()
	clock := fakecloud.NewManualClock(time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC))
	s := New(Options{Now: clock.Now, ProvisionDelay: time.Minute, RemoveDelay: time.Minute})
	apispec.WatchFake(t, s.API, meta, cov)
	s.AddInstanceType(InstanceType{ID: "ecs.g1.large", Family: "ecs.g1", CPUs: 2, MemoryMiB: 8192})
	s.AddInstanceType(InstanceType{ID: "ecs.gni2.3xlarge", Family: "ecs.gni2", CPUs: 12, MemoryMiB: 47104, GPUCount: 1, GPUModel: "NVIDIA A10"})
	s.AddSubnet(Subnet{ID: "subnet-1", ZoneID: "cn-beijing-a"})
	s.AddImage(Image{ID: "image-1", Architecture: "amd64", OSType: "Linux"})
	s.AddConfiguration(Configuration{ID: "scc-1", GroupID: "scg-1", InstanceTypes: []string{"ecs.g1.large"}, ImageID: "image-1", ZoneID: "cn-beijing-a"})
	s.AddGroup(Group{ID: "scg-1", Name: "workers", Min: 1, Max: 5, Desired: 2, ActiveConfigID: "scc-1", SubnetIDs: []string{"subnet-1"}, Tags: map[string]string{"k8s.io/cluster-autoscaler/enabled": "true"}})
	s.AddGroup(Group{ID: "scg-2", Name: "gpu", Min: 0, Max: 2, Desired: 0, LaunchTemplateID: "lt-1", LaunchTemplateVersion: "1", LaunchTemplateTypes: []string{"ecs.gni2.3xlarge"}, SubnetIDs: []string{"subnet-1"}})
	s.AddGroup(Group{ID: "scg-3", Name: "none", Min: 0, Max: 1, Desired: -1})
	s.SetCreateFailure("scg-2", &CreateFailure{Code: "InsufficientStock", Message: "no stock"})
	base := s.Start()
	t.Cleanup(s.Close)

	const auth = "HMAC-SHA256 Credential=AK/20261202/cn-beijing/auto_scaling/request, SignedHeaders=host, Signature=00"
	send := func(action, version string, params map[string]string, want int) {
		t.Helper()
		q := url.Values{"Action": {action}, "Version": {version}}
		for k, v := range params {
			q.Set(k, v)
		}
		req, _ := http.NewRequest(http.MethodGet, base+"/?"+q.Encode(), nil)
		req.Header.Set("Authorization", auth)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", action, err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("%s %v: status %d, want %d", action, params, resp.StatusCode, want)
		}
	}
	const as, ecsV, vpcV = "2020-01-01", "2020-04-01", "2020-04-01"
	reads := func() {
		t.Helper()
		send("DescribeScalingGroups", as, map[string]string{"PageNumber": "1", "PageSize": "2"}, http.StatusOK)
		send("DescribeScalingGroups", as, map[string]string{"PageNumber": "2", "PageSize": "2"}, http.StatusOK)
		send("DescribeScalingGroups", as, map[string]string{"ScalingGroupIds.1": "scg-1", "ScalingGroupIds.2": "scg-2"}, http.StatusOK)
		send("DescribeScalingGroups", as, map[string]string{"TagFilters.1.Key": "k8s.io/cluster-autoscaler/enabled", "TagFilters.1.Value": "true"}, http.StatusOK)
		for _, g := range []string{"scg-1", "scg-2"} {
			send("DescribeScalingInstances", as, map[string]string{"ScalingGroupId": g, "PageNumber": "1", "PageSize": "50"}, http.StatusOK)
			send("DescribeScalingActivities", as, map[string]string{"ScalingGroupId": g, "PageNumber": "1", "PageSize": "50"}, http.StatusOK)
		}
		send("DescribeScalingConfigurations", as, map[string]string{"ScalingConfigurationIds.1": "scc-1", "PageNumber": "1", "PageSize": "50"}, http.StatusOK)
		send("DescribeInstanceTypes", ecsV, map[string]string{"InstanceTypeIds.1": "ecs.g1.large", "InstanceTypeIds.2": "ecs.gni2.3xlarge", "MaxResults": "10"}, http.StatusOK)
		send("DescribeImages", ecsV, map[string]string{"ImageIds.1": "image-1", "MaxResults": "50"}, http.StatusOK)
		send("DescribeSubnets", vpcV, map[string]string{"SubnetIds.1": "subnet-1", "PageNumber": "1", "PageSize": "50"}, http.StatusOK)
	}
	s.Reconcile()
	reads()
	// Growing: instances pending, a failed launch's activity and Error instances.
	send("ModifyScalingGroup", as, map[string]string{"ScalingGroupId": "scg-1", "DesireInstanceNumber": "4"}, http.StatusOK)
	send("ModifyScalingGroup", as, map[string]string{"ScalingGroupId": "scg-2", "DesireInstanceNumber": "1"}, http.StatusOK)
	s.Reconcile()
	reads()
	clock.Advance(2 * time.Minute)
	s.Reconcile()
	reads()
	in := s.Instances("scg-1")
	send("RemoveInstances", as, map[string]string{"ScalingGroupId": "scg-1", "InstanceIds.1": in[0].ID, "DecreaseDesiredCapacity": "true"}, http.StatusOK)
	reads()
	// Error answers.
	send("DescribeScalingInstances", as, map[string]string{"ScalingGroupId": "scg-nope", "PageNumber": "1", "PageSize": "50"}, http.StatusBadRequest)
	send("ModifyScalingGroup", as, map[string]string{"ScalingGroupId": "scg-nope", "DesireInstanceNumber": "1"}, http.StatusBadRequest)
	send("ModifyScalingGroup", as, map[string]string{"ScalingGroupId": "scg-1", "DesireInstanceNumber": "9"}, http.StatusBadRequest)
	send("RemoveInstances", as, map[string]string{"ScalingGroupId": "scg-1", "InstanceIds.1": "i-nope"}, http.StatusBadRequest)
	send("DescribeScalingGroups", "2019-01-01", nil, http.StatusNotFound)
	send("NoSuchAction", as, nil, http.StatusNotFound)
	s.AddFault(fakecloud.Fault{Status: http.StatusTooManyRequests, Code: "AccountFlowLimitExceeded"})
	send("DescribeScalingGroups", as, nil, http.StatusTooManyRequests)
	s.Close()

	served := map[string]bool{}
	for _, op := range cov.Operations() {
		served[op] = true
	}
	for action := range handlers {
		if !served[action] {
			t.Errorf("action %s was not exercised", action)
		}
	}
}
