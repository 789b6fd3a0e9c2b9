package cloudprovider

import "testing"

func TestManagementInDebugRoundTrips(t *testing.T) {
	t.Parallel()
	cases := []struct {
		debug string
		m     Management
		want  string
	}{
		{"pool p1 (label \"general\")", Management{By: ManagedByNodes, Detail: "1:5:general"}, "pool p1 (label \"general\"); managed: --nodes (1:5:general)"},
		{"scg-1 min 1 max 3; settings from tags", Management{By: ManagedByDiscovery, Detail: "asg:tag=k8s.io/ca=on"}, "scg-1 min 1 max 3; settings from tags; managed: discovery (asg:tag=k8s.io/ca=on)"},
		{"", Management{By: ManagedByLearnt}, "managed: learnt"},
		{"pool x", Management{}, "pool x"},
	}
	for _, tc := range cases {
		got := WithManaged(tc.debug, tc.m)
		if got != tc.want {
			t.Errorf("WithManaged(%q, %v) = %q, want %q", tc.debug, tc.m, got, tc.want)
		}
		back, ok := ManagementFromDebug(got)
		if ok != (tc.m.By != "") || back != tc.m {
			t.Errorf("ManagementFromDebug(%q) = %v, %v; want %v", got, back, ok, tc.m)
		}
	}
}

func TestManagementFromDebugIgnoresOtherText(t *testing.T) {
	t.Parallel()
	for _, debug := range []string{"", "vultr node pool p1", "unmanaged: yes", "x; managed: ", "x; managed: two words"} {
		if m, ok := ManagementFromDebug(debug); ok {
			t.Errorf("ManagementFromDebug(%q) = %v, want none", debug, m)
		}
	}
}
