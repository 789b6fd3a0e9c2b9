package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/inspect"
)

// printBanner tells a first-time user what is running and what to try next.
// The suggested scale-up names a real group with room to grow, so it can be
// pasted as is; make demo reads the same line. Groups are listed by id, with
// the name the cloud shows (groupNames, by id) where the simulation gave one,
// and why each is managed.
func printBanner(ctx context.Context, w io.Writer, self string, cfg *config, p cloudprovider.CloudProvider, groupNames map[string]string, address string, tls bool) {
	conn := ""
	if address != inspect.DefaultAddress {
		conn = " --address " + address
	}
	if tls {
		conn += " --tls-ca-file <CA of the server certificate>"
		if cfg.tlsClientCA != "" {
			conn += " --tls-cert-file <client cert> --tls-key-file <client key>"
		}
	}
	fmt.Fprintf(w, "\nSimulated %s is ready: an in-process fake of the cloud API, no account or network needed. Node groups:\n", cfg.provider)
	groups, err := p.NodeGroups(ctx)
	if err != nil {
		groups = nil
	}
	// Suggest the group with the most room, so the scale-up is accepted.
	pick, room := "", 0
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, g := range groups {
		target, _ := g.TargetSize(ctx)
		name := groupNames[g.Id(ctx)]
		if name != "" {
			name = "(" + name + ")"
		}
		managed := ""
		if why := g.Status(ctx).Managed.String(); why != "" {
			managed = ", managed: " + why
		}
		fmt.Fprintf(tw, "  %s\t%s\tmin %d, max %d, target %d%s\n", g.Id(ctx), name, g.MinSize(ctx), g.MaxSize(ctx), target, managed)
		if r := g.MaxSize(ctx) - target; r > room {
			pick, room = g.Id(ctx), r
		}
	}
	_ = tw.Flush()
	fmt.Fprintln(w, "Try next, in another terminal:")
	fmt.Fprintf(w, "  %s %s%s\n", self, inspect.Command, conn)
	if pick != "" {
		fmt.Fprintf(w, "  %s %s%s --scale-up %s=1\n", self, inspect.Command, conn, pick)
	}
	fmt.Fprintf(w, "Point a Cluster Autoscaler here with --cloud-provider=externalgrpc and a --cloud-config file holding \"address: %s\". Stop with Ctrl-C.\n", address)
}

// selfCommand is how the user started this binary: "go run ." from a go run
// build directory, the path they typed otherwise.
func selfCommand(arg0 string) string {
	if strings.Contains(arg0, string(filepath.Separator)+"go-build") {
		return "go run ."
	}
	return arg0
}

func displayAddress(a externalgrpc.Address, lis net.Listener) string {
	if a.Network == "unix" {
		return "unix://" + a.Addr
	}
	return lis.Addr().String()
}

func tlsNote(tls bool) string {
	if tls {
		return " (TLS)"
	}
	return " (plaintext)"
}
