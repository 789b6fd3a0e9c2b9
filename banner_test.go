package main

import (
	"context"
	"strings"
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudprovidertest"
)

func TestSelfCommand(t *testing.T) {
	cases := map[string]string{
		"/tmp/go-build123/b001/exe/cluster-autoscaler-provider": "go run .",
		"./bin/cluster-autoscaler-provider":                     "./bin/cluster-autoscaler-provider",
		"cluster-autoscaler-provider":                           "cluster-autoscaler-provider",
	}
	for in, want := range cases {
		t.Run(in, func(t *testing.T) {
			if got := selfCommand(in); got != want {
				t.Fatalf("selfCommand(%q) = %q, want %q", in, got, want)
			}
		})
	}
}

func TestBannerSuggestsWorkingCommands(t *testing.T) {
	cloud := cloudprovidertest.NewInMemoryCloud(
		cloudprovidertest.CloudGroup{ID: "full", Min: 1, Max: 2, Running: 2},
		cloudprovidertest.CloudGroup{ID: "roomy", Min: 0, Max: 9, Running: 1},
		cloudprovidertest.CloudGroup{ID: "some", Min: 0, Max: 3, Running: 0},
	)
	p := cloudprovidertest.NewInMemoryProvider(cloud)
	if err := p.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		cfg      config
		names    map[string]string
		address  string
		tls      bool
		want     []string
		unwanted []string
	}{
		{"default address", config{provider: "vultr"}, nil, "127.0.0.1:8086", false,
			[]string{"Simulated vultr is ready", "  go run . inspect\n", "  go run . inspect --scale-up roomy=1\n", "\"address: 127.0.0.1:8086\""}, []string{"--address"}},
		{"group names next to ids", config{provider: "vultr"}, map[string]string{"roomy": "general"}, "127.0.0.1:8086", false,
			[]string{"  roomy  (general)  min "}, nil},
		{"why each group is managed", config{provider: "vultr"}, nil, "127.0.0.1:8086", false,
			[]string{"min 0, max 9, target 1, managed: cluster\n", "min 1, max 2, target 2, managed: cluster\n"}, nil},
		{"other address", config{provider: "exoscale"}, nil, "unix:///run/cap.sock", false,
			[]string{"  go run . inspect --address unix:///run/cap.sock --scale-up roomy=1\n"}, []string{"--tls"}},
		{"TLS", config{provider: "exoscale"}, nil, "127.0.0.1:8086", true,
			[]string{"inspect --tls-ca-file <CA of the server certificate> --scale-up roomy=1\n"}, []string{"--tls-cert-file"}},
		{"mTLS", config{provider: "exoscale", tlsClientCA: "ca.pem"}, nil, "127.0.0.1:8086", true,
			[]string{"--tls-ca-file <CA of the server certificate> --tls-cert-file <client cert> --tls-key-file <client key> --scale-up roomy=1\n"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			printBanner(context.Background(), &b, "go run .", &tc.cfg, p, tc.names, tc.address, tc.tls)
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("banner lacks %q", w)
				}
			}
			for _, u := range tc.unwanted {
				if strings.Contains(b.String(), u) {
					t.Errorf("banner has %q", u)
				}
			}
			if t.Failed() {
				t.Log(b.String())
			}
		})
	}
}
