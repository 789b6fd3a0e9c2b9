package main

import (
	"bufio"
	"context"
	"io"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
	volcfake "github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine/volcapi/fakeapi"
	vultrfake "github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr/vultrapi/fakeapi"
)

// TestIDsUpstreamAccepts: ids upstream takes, though not shaped like the
// cloud's (a Vultr cluster_id "c1", a Volcengine --nodes id "asg-1"),
// pass --check-config with one warning naming the value and exit 0, and
// the server starts and serves a fake cloud whose ids are those.
func TestIDsUpstreamAccepts(t *testing.T) {
	t.Parallel()
	cases := []struct {
		provider string
		// start seeds a fake cloud holding the ids and returns the flags
		// that reach it and the flags --check-config gets, offline.
		start   func(t *testing.T) (serveArgs, checkArgs []string)
		warning string
		group   string
	}{
		{
			provider: "vultr",
			start: func(t *testing.T) ([]string, []string) {
				fake := vultrfake.New(vultrfake.Options{Token: "t"})
				fake.Start()
				t.Cleanup(fake.Close)
				fake.AddPlans(vultrfake.StandardPlans()...)
				fake.AddCluster(vultrfake.ClusterSpec{ID: "c1", Label: "c1", Region: "ewr", Version: "v1.33.0+1"})
				if _, err := fake.AddPool("c1", vultrfake.PoolSpec{ID: "p1", Label: "main", Plan: "vc2-2c-4gb", Quantity: 2, Min: 1, Max: 4, AutoScaler: true}); err != nil {
					t.Fatal(err)
				}
				serve := writeFile(t, "vultr.json", `{"token":"t","cluster_id":"c1","api_url":"`+fake.URL()+`"}`)
				check := writeFile(t, "vultr.json", `{"token":"t","cluster_id":"c1"}`)
				return []string{"--cloud-config", serve}, []string{"--cloud-config", check}
			},
			warning: `vultr.json:1:27: cluster_id "c1" is not a UUID, the form of VKE cluster IDs (8-4-4-4-12 hex digits`,
			group:   "p1",
		},
		{
			provider: "volcengine",
			start: func(t *testing.T) ([]string, []string) {
				fake := volcfake.New(volcfake.Options{})
				endpoint, err := url.Parse(fake.Start())
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(fake.Close)
				fake.AddSubnet(volcfake.Subnet{ID: "subnet-a", ZoneID: "cn-beijing-a"})
				fake.AddImage(volcfake.Image{ID: "image-linux", Architecture: "x86_64", OSType: "Linux"})
				fake.AddInstanceType(volcfake.InstanceType{ID: "ecs.g3i.xlarge", CPUs: 4, MemoryMiB: 16384})
				fake.AddConfiguration(volcfake.Configuration{ID: "scc-1", GroupID: "asg-1", InstanceTypes: []string{"ecs.g3i.xlarge"}, ImageID: "image-linux"})
				fake.AddGroup(volcfake.Group{ID: "asg-1", Name: "asg", Min: 1, Max: 3, Desired: 2, ActiveConfigID: "scc-1", SubnetIDs: []string{"subnet-a"}})
				fake.Reconcile()
				fake.Settle()
				cfg := volcCfg(t, endpoint.Host, "http")
				return []string{"--cloud-config", cfg, "--nodes", "1:3:asg-1"}, []string{"--cloud-config", cfg, "--nodes", "1:3:asg-1"}
			},
			warning: `--nodes 1:3:asg-1: "asg-1" is not shaped like a scaling group id (scg- and letters or digits`,
			group:   "asg-1",
		},
	}
	for _, tc := range cases {
		t.Run(tc.provider, func(t *testing.T) {
			t.Parallel()
			if _, ok := registry.Lookup(tc.provider); !ok {
				t.Skipf("%s is not compiled in", tc.provider)
			}
			serveArgs, checkArgs := tc.start(t)

			code, out, stderr := runArgs(t, append([]string{"--cloud-provider", tc.provider, "--check-config"}, checkArgs...)...)
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if code != 0 || len(lines) != 1 || !strings.HasPrefix(lines[0], "warning: ") || !strings.Contains(lines[0], tc.warning) {
				t.Fatalf("--check-config: exit %d, stderr %q; want 0 and one warning line containing %q", code, stderr, tc.warning)
			}
			if want := "configuration OK for " + tc.provider + " (1 warning above)\n"; out != want {
				t.Fatalf("--check-config: stdout %q, want %q", out, want)
			}

			ids := serveAndListGroups(t, append([]string{"--cloud-provider", tc.provider}, serveArgs...))
			if len(ids) != 1 || ids[0] != tc.group {
				t.Fatalf("served node groups %v, want [%s]", ids, tc.group)
			}
		})
	}
}

// serveAndListGroups runs the server with args (startRun: it must exit 0
// when the test ends) until it serves, and asks it for its node groups over
// gRPC as CA does.
func serveAndListGroups(t *testing.T, args []string) []string {
	t.Helper()
	pr := startRun(t, append(args, "--address", "127.0.0.1:0", "--metrics-address", ""))
	sc := bufio.NewScanner(pr)
	serving := regexp.MustCompile(`^Serving \S+ on (\S+) \(plaintext\)`)
	addr := ""
	for addr == "" && sc.Scan() {
		if m := serving.FindStringSubmatch(sc.Text()); m != nil {
			addr = m[1]
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if addr == "" {
		t.Fatal("the server did not start serving")
	}
	conn := dialServer(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := protos.NewCloudProviderClient(conn).NodeGroups(ctx, &protos.NodeGroupsRequest{})
	if err != nil {
		t.Fatalf("NodeGroups: %v", err)
	}
	var ids []string
	for _, g := range resp.GetNodeGroups() {
		ids = append(ids, g.GetId())
	}
	return ids
}
