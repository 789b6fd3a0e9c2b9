package inspect

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc"
)

func decodeResult(t *testing.T, out string) Result {
	t.Helper()
	var r Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	return r
}

// TestCollectShowsWhatCASees checks every part of the report against the
// fake's state, read through the real server as CA reads it.
func TestCollectShowsWhatCASees(t *testing.T) {
	p := newFakeProvider()
	addr := serve(t, p, nil, nil)
	code, out, stderr := inspectRun(t, "--address", addr, "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r := decodeResult(t, out).Report
	if r == nil || len(r.Groups) != 2 {
		t.Fatalf("report = %+v, want 2 groups", r)
	}
	if r.MaxStaleness != testMaxStaleness.String() || maxStalenessHeader != externalgrpc.MaxStalenessHeader {
		t.Fatalf("maxStaleness %q, want the server's %s", r.MaxStaleness, testMaxStaleness)
	}
	if _, text, _ := inspectRun(t, "--address", addr); !strings.Contains(text, "at most 45s old (--max-staleness)") {
		t.Fatalf("text report does not show the staleness bound:\n%s", text)
	}
	if r.Server != addr || r.GPULabel != "fake.example/gpu" || !reflect.DeepEqual(r.GPUTypes, []string{"a100", "l4"}) {
		t.Fatalf("server/GPU = %q %q %v", r.Server, r.GPULabel, r.GPUTypes)
	}
	w, g := r.Groups[0], r.Groups[1]

	t.Run("sizes", func(t *testing.T) {
		if w.ID != "workers" || w.Min != 1 || w.Max != 5 || w.Target != 3 || w.Debug != "fake group workers; managed: --nodes (1:5:workers)" {
			t.Fatalf("workers = %+v", w)
		}
		if w.Managed != "--nodes" || w.ManagedDetail != "1:5:workers" {
			t.Fatalf("workers managed = %q (%q), want --nodes (1:5:workers), read from the server's Debug", w.Managed, w.ManagedDetail)
		}
		if g.Managed != "" || g.ManagedDetail != "" {
			t.Fatalf("gpu managed = %q (%q), want nothing: the server does not say", g.Managed, g.ManagedDetail)
		}
		if g.ID != "gpu" || g.Min != 0 || g.Max != 2 || g.Target != 0 {
			t.Fatalf("gpu = %+v", g)
		}
	})
	t.Run("instances with states and error info", func(t *testing.T) {
		want := []Instance{
			{ProviderID: "fake://w-1", State: "running"},
			{ProviderID: "fake://w-2", State: "running"},
			{ProviderID: "fake://w-3", State: "creating", ErrorCode: "QUOTA", ErrorMessage: "instance quota reached", ErrorClass: 1},
			{ProviderID: "fake://w-4", State: "unspecified"},
		}
		if !reflect.DeepEqual(w.Instances, want) {
			t.Fatalf("instances = %+v\nwant %+v", w.Instances, want)
		}
		if len(g.Instances) != 0 {
			t.Fatalf("gpu instances = %+v", g.Instances)
		}
	})
	t.Run("template decoded from nodeBytes", func(t *testing.T) {
		tm := w.Template
		if tm == nil {
			t.Fatalf("no template: %s", w.TemplateNote)
		}
		if tm.Capacity["cpu"] != "4" || tm.Capacity["memory"] != "16Gi" || tm.Capacity["nvidia.com/gpu"] != "1" || tm.Allocatable["cpu"] != "3800m" {
			t.Fatalf("resources = %v / %v", tm.Capacity, tm.Allocatable)
		}
		if tm.Labels["pool"] != "workers" || !reflect.DeepEqual(tm.Taints, []string{"dedicated=batch:NoSchedule"}) || !tm.Ready {
			t.Fatalf("labels %v taints %v ready %t", tm.Labels, tm.Taints, tm.Ready)
		}
	})
	t.Run("no template is Unimplemented, not an error", func(t *testing.T) {
		if g.Template != nil || g.TemplateNote == "" || len(g.Errors) != 0 {
			t.Fatalf("gpu template %+v note %q errors %v", g.Template, g.TemplateNote, g.Errors)
		}
	})
	t.Run("template priced like CA's price expander", func(t *testing.T) {
		if w.PricePerHour == nil || *w.PricePerHour != 0.25 {
			t.Fatalf("workers price %v note %q", w.PricePerHour, w.PriceNote)
		}
		if g.PricePerHour != nil || g.PriceNote != "no template to price" {
			t.Fatalf("gpu price %v note %q", g.PricePerHour, g.PriceNote)
		}
	})
	t.Run("options", func(t *testing.T) {
		if w.Options != nil || w.OptionsNote != "CA defaults (no override)" {
			t.Fatalf("workers options %+v %q", w.Options, w.OptionsNote)
		}
		want := &Options{ScaleDownUtilizationThreshold: 0.2, ScaleDownGpuUtilizationThreshold: 0.3, ZeroOrMaxNodeScaling: true,
			ScaleDownUnneededTime: "10m0s", ScaleDownUnreadyTime: "20m0s", MaxNodeProvisionTime: "15m0s",
			Overrides: []string{"scaledownutilizationthreshold=0.2 (default 0.5)", "scaledowngpuutilizationthreshold=0.3 (default 0.5)", "zeroormaxnodescaling=true (default false)"}}
		if !reflect.DeepEqual(g.Options, want) {
			t.Fatalf("gpu options = %+v, want %+v (overrides on top of CA's defaults)", g.Options, want)
		}
	})
}

func TestCollectGroupFilter(t *testing.T) {
	addr := serve(t, newFakeProvider(), nil, nil)
	cases := []struct {
		name   string
		groups []string
		code   int
		want   []string
	}{
		{"one group", []string{"gpu"}, 0, []string{"gpu"}},
		{"both", []string{"gpu", "workers"}, 0, []string{"workers", "gpu"}},
		{"unknown group", []string{"nope"}, 1, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"--address", addr, "-o", "json"}
			for _, g := range tc.groups {
				args = append(args, "--group", g)
			}
			code, out, _ := inspectRun(t, args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d", code, tc.code)
			}
			if tc.code != 0 {
				return
			}
			var ids []string
			for _, g := range decodeResult(t, out).Report.Groups {
				ids = append(ids, g.ID)
			}
			if !reflect.DeepEqual(ids, tc.want) {
				t.Fatalf("groups %v, want %v", ids, tc.want)
			}
		})
	}
}

func TestCollectPricingNotImplemented(t *testing.T) {
	p := newFakeProvider()
	p.noPricing = true
	addr := serve(t, p, nil, nil)
	code, out, _ := inspectRun(t, "--address", addr, "-o", "json", "--group", "workers")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	w := decodeResult(t, out).Report.Groups[0]
	if w.PricePerHour != nil || !strings.HasPrefix(w.PriceNote, "not implemented") || len(w.Errors) != 0 {
		t.Fatalf("price %v note %q errors %v", w.PricePerHour, w.PriceNote, w.Errors)
	}
}
