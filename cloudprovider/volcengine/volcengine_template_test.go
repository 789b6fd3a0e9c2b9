package volcengine

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine/volcapi/fakeapi"
)

func TestTemplateNodeInfo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		group      string
		wantLabels map[string]string
		wantCPU    int64
		wantMemMiB int64
		wantGPU    int64
	}{
		{
			name:  "general purpose",
			group: mainGroupID,
			wantLabels: map[string]string{
				corev1.LabelInstanceTypeStable: "ecs.g3i.xlarge", corev1.LabelTopologyRegion: "cn-beijing", corev1.LabelTopologyZone: "cn-beijing-a",
				corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64", LabelScalingGroup: mainGroupID,
			},
			wantCPU: 4, wantMemMiB: 16384,
		},
		{
			name:  "gpu on arm image",
			group: otherGroupID,
			wantLabels: map[string]string{
				corev1.LabelInstanceTypeStable: "ecs.gni2.3xlarge", corev1.LabelTopologyZone: "cn-beijing-b", corev1.LabelArchStable: "arm64", GPULabel: "NVIDIA-A10",
			},
			wantCPU: 12, wantMemMiB: 47104, wantGPU: 1,
		},
	}
	e := newEnv(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			node, err := e.group(t, tc.group).TemplateNodeInfo(testCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.wantLabels {
				if node.Labels[k] != v {
					t.Errorf("label %s = %q, want %q", k, node.Labels[k], v)
				}
			}
			for _, rl := range []corev1.ResourceList{node.Status.Capacity, node.Status.Allocatable} {
				cpu, mem, pods := rl[corev1.ResourceCPU], rl[corev1.ResourceMemory], rl[corev1.ResourcePods]
				gpu := rl[groupconfig.ResourceGPU]
				if cpu.Value() != tc.wantCPU || mem.Value() != tc.wantMemMiB*1024*1024 || pods.Value() != groupconfig.DefaultMaxPods || gpu.Value() != tc.wantGPU {
					t.Errorf("resources = %v", rl)
				}
			}
			ready := false
			for _, c := range node.Status.Conditions {
				ready = ready || (c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue)
			}
			if !ready {
				t.Error("no Ready condition")
			}
			if b, err := node.Marshal(); err != nil || len(b) == 0 {
				t.Errorf("Marshal: %d bytes, %v", len(b), err)
			}
		})
	}
}

func TestTemplateSources(t *testing.T) {
	t.Parallel()
	seed := func(f *fakeapi.Server) {
		seedStandard(f)
		f.AddGroup(fakeapi.Group{ID: "scg-lt-types", Min: 0, Max: 3, Desired: 0, LaunchTemplateID: "lt-1", LaunchTemplateVersion: "2",
			LaunchTemplateTypes: []string{"ecs.g3i.xlarge"}, SubnetIDs: []string{"subnet-b"}})
		f.AddGroup(fakeapi.Group{ID: "scg-lt-bare", Min: 0, Max: 3, Desired: 0, LaunchTemplateID: "lt-2", LaunchTemplateVersion: "Default"})
		f.AddGroup(fakeapi.Group{ID: "scg-no-config", Min: 0, Max: 3, Desired: 0, ActiveConfigID: "scc-missing"})
	}
	e := newEnv(t, withSeed(seed), withStatic("1:10:"+mainGroupID, "0:3:scg-lt-types", "0:3:scg-lt-bare", "0:3:scg-no-config"))
	tests := []struct {
		group    string
		wantErr  error
		wantType string
	}{
		{group: mainGroupID, wantType: "ecs.g3i.xlarge"},
		{group: "scg-lt-types", wantType: "ecs.g3i.xlarge"},
		{group: "scg-lt-bare", wantErr: cloudprovider.ErrNotImplemented},
		{group: "scg-no-config", wantErr: cloudprovider.ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.group, func(t *testing.T) {
			t.Parallel()
			node, err := e.group(t, tc.group).TemplateNodeInfo(testCtx(t))
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || node != nil {
					t.Fatalf("TemplateNodeInfo = %v, %v; want %v", node, err, tc.wantErr)
				}
				return
			}
			if err != nil || node.Labels[corev1.LabelInstanceTypeStable] != tc.wantType {
				t.Fatalf("TemplateNodeInfo = %v, %v", node, err)
			}
		})
	}
}

func TestTemplateFetchFailureKeepsRefreshAndRetries(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withSeed(func(f *fakeapi.Server) {
		seedStandard(f)
		// Fail the template fetch made by the first snapshot.
		f.AddFault(fakecloud.Fault{Operation: fakeapi.ActionDescribeInstanceTypes, Status: 500, Code: "InternalError", Times: 100})
	}))
	g := e.group(t, mainGroupID)
	if _, err := g.TemplateNodeInfo(testCtx(t)); !errors.Is(err, cloudprovider.ErrUnavailable) {
		t.Fatalf("TemplateNodeInfo error = %v, want unavailable", err)
	}
	e.fake.ClearFaults()
	if err := e.p.Refresh(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := g.TemplateNodeInfo(testCtx(t)); err == nil {
		t.Fatal("retried too early: the fetch should wait templateRetry")
	}
	e.clock.Advance(templateRetry)
	if err := e.p.Refresh(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := g.TemplateNodeInfo(testCtx(t)); err != nil {
		t.Fatalf("after retry: %v", err)
	}
}

func TestGPULabelValue(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"NVIDIA A10": "NVIDIA-A10", "": "unknown", "  Tesla V100/32G ": "Tesla-V100-32G", "***": "unknown"} {
		if got := gpuLabelValue(in); got != want {
			t.Errorf("gpuLabelValue(%q) = %q, want %q", in, got, want)
		}
	}
}
