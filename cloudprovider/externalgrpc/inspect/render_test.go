package inspect

import (
	"strings"
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

func TestTableOutput(t *testing.T) {
	p := newFakeProvider()
	addr := serve(t, p, nil, nil)
	code, out, stderr := inspectRun(t, "--address", addr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"GPU label fake.example/gpu   GPU types a100,l4",
		"NODE GROUP  MANAGED  MIN  MAX  TARGET  INSTANCES",
		"workers     --nodes  1    5    3       2 running, 1 creating, 1 unspecified, 1 failed  m.large: cpu 4 mem 16Gi nvidia.com/gpu 1  defaults",
		"gpu         -        0    2    0       0",
		"fake group workers; managed: --nodes (1:5:workers)",
		"fake://w-3  creating     QUOTA (class 1): instance quota reached",
		"template labels      node.kubernetes.io/instance-type=m.large pool=workers",
		"template taints      dedicated=batch:NoSchedule",
		"template             none (Unimplemented): CA cannot scale this group up from zero",
		"options              utilization 0.2, gpu utilization 0.3, unneeded 10m0s",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q", want)
		}
	}
	for i, l := range strings.Split(out, "\n") {
		if strings.HasSuffix(l, " ") {
			t.Errorf("line %d ends in spaces: %q", i+1, l)
		}
	}
	if t.Failed() {
		t.Log(out)
	}
}

func TestTableBeforeAfter(t *testing.T) {
	p := newFakeProvider()
	addr := serve(t, p, nil, nil)
	code, out, stderr := inspectRun(t, "--address", addr, "--group", "workers", "--scale-up", "workers=1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	before, after := strings.Index(out, "== before"), strings.Index(out, "== after")
	actions := strings.Index(out, "== actions\nNodeGroupIncreaseSize workers delta=1: OK")
	if before < 0 || actions < before || after < actions {
		t.Fatalf("want before, actions, after in order:\n%s", out)
	}
}

// TestRefusedMutationPrintsOnlyTheRefusal: when every change was refused
// nothing changed, so the tables are left out and the refusal stands alone.
func TestRefusedMutationPrintsOnlyTheRefusal(t *testing.T) {
	p := newFakeProvider()
	addr := serve(t, p, nil, nil)
	code, out, _ := inspectRun(t, "--address", addr, "--group", "workers", "--scale-up", "workers=9")
	if code != 1 {
		t.Fatalf("exit %d, want 1 for a refused mutation", code)
	}
	if !strings.HasPrefix(out, "== actions (all refused; nothing changed)\nNodeGroupIncreaseSize workers delta=9: REFUSED: FailedPrecondition") ||
		strings.Contains(out, "== before") || strings.Contains(out, "NODE GROUP") {
		t.Fatalf("want only the refusal:\n%s", out)
	}
}

func TestEmptyServer(t *testing.T) {
	p := newFakeProvider()
	p.groups = nil
	addr := serve(t, p, nil, nil)
	code, out, _ := inspectRun(t, "--address", addr)
	if code != 0 || !strings.Contains(out, "No node groups: CA would do nothing") || !strings.Contains(out, "GPU label fake.example/gpu") {
		t.Fatalf("exit %d out %q", code, out)
	}
}

// TestRefreshFailureStillShowsSnapshot: a failing Refresh is what makes CA
// stop, so inspect still shows what the server serves, and exits 1 with the
// server's reason so a script cannot take the snapshot for the cloud.
func TestRefreshFailureStillShowsSnapshot(t *testing.T) {
	p := newFakeProvider()
	p.refreshErr = cloudprovider.Errorf(cloudprovider.ErrUnauthenticated, "key revoked")
	addr := serve(t, p, nil, nil)
	code, out, stderr := inspectRun(t, "--address", addr)
	if code != 1 || !strings.Contains(stderr, "Refresh failed") || !strings.Contains(stderr, "key revoked") || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("exit %d stderr %q; want 1 and the server's reason", code, stderr)
	}
	if !strings.Contains(out, "WARNING Refresh failed: Unauthenticated: refresh fake: key revoked") || !strings.Contains(out, "workers     --nodes  1    5    3") {
		t.Fatalf("output:\n%s", out)
	}
	code, out, _ = inspectRun(t, "--address", addr, "-o", "json")
	if r := decodeResult(t, out).Report; code != 1 || r == nil || !strings.HasPrefix(r.RefreshError, "Unauthenticated:") || len(r.Groups) != 2 {
		t.Fatalf("exit %d json %s", code, out)
	}
}

// TestRefreshFailureWithoutGroupsBlamesTheRefresh: a server with no good
// snapshot yet serves no groups; the advice points at the failure, not at
// the node group selection.
func TestRefreshFailureWithoutGroupsBlamesTheRefresh(t *testing.T) {
	p := newFakeProvider()
	p.groups = nil
	p.refreshErr = cloudprovider.Errorf(cloudprovider.ErrUnavailable, "no such host")
	addr := serve(t, p, nil, nil)
	code, out, stderr := inspectRun(t, "--address", addr)
	if code != 1 || strings.Contains(out, "--nodes") || !strings.Contains(out, "fix the Refresh failure above first") || !strings.Contains(stderr, "no such host") {
		t.Fatalf("exit %d stderr %q out:\n%s", code, stderr, out)
	}
}

func TestGroupHeadingNamesTheIDOnce(t *testing.T) {
	cases := []struct {
		g    Group
		want string
	}{
		{Group{ID: "pool-1", Debug: "vultr node pool pool-1 (label \"general\")"}, "vultr node pool pool-1 (label \"general\")"},
		{Group{ID: "scg-1", Debug: "general pool, 2 instances"}, "scg-1  (general pool, 2 instances)"},
		{Group{ID: "scg-1"}, "scg-1"},
	}
	for _, tc := range cases {
		if got := groupHeading(tc.g); got != tc.want {
			t.Errorf("groupHeading(%+v) = %q, want %q", tc.g, got, tc.want)
		}
		if n := strings.Count(groupHeading(tc.g), tc.g.ID); n != 1 {
			t.Errorf("heading %q names %s %d times", groupHeading(tc.g), tc.g.ID, n)
		}
	}
}

func TestRequestedButNotListedInstancesShown(t *testing.T) {
	r := &Report{Server: "x", Groups: []Group{
		{ID: "pool-a", Min: 1, Max: 5, Target: 3, Instances: []Instance{
			{ProviderID: "fake://a-1", State: "running"},
			{ProviderID: "fake://a-2", State: "deleting"},
		}},
		{ID: "pool-b", Min: 1, Max: 5, Target: 1, Instances: []Instance{{ProviderID: "fake://b-1", State: "running"}}},
	}}
	var out strings.Builder
	if err := writeReport(&out, r); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(out.String(), "not listed by the cloud yet"); got != 1 {
		t.Fatalf("want the note once (pool-a only), got %d:\n%s", got, out.String())
	}
	if !strings.Contains(out.String(), "  +2 requested, not listed by the cloud yet") {
		t.Errorf("pool-a should show 2 requested instances (target 3, one running, one deleting):\n%s", out.String())
	}
}
