package inspect

import (
	"context"
	"flag"
	"fmt"
	"io"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
)

// ProbeCommand is the name of the health-probe subcommand.
const ProbeCommand = "probe"

// ProbeSummary is the one line the binary's --help shows for the probe.
const ProbeSummary = "ask the server's gRPC health service whether it is SERVING (a Kubernetes exec probe)"

// NewProbeFlagSet declares the probe's flags (how to reach the server, as for
// inspect) into f; docs/flags.md is generated from it.
func NewProbeFlagSet(f *Flags, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(ProbeCommand, flag.ContinueOnError)
	fs.SetOutput(stderr)
	addConnectionFlags(fs, f)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `Usage: cluster-autoscaler-provider probe [flags]

Asks the server's gRPC health service whether the CloudProvider service is
SERVING, over the same address and TLS settings CA uses: a Kubernetes exec
probe for a loopback sidecar or an mTLS listener, which the kubelet's own gRPC
probe cannot reach.

Exit codes: 0 serving; 1 not serving or unreachable; 2 bad flags.

Examples:
  # Readiness probe of a sidecar on the default loopback address
  cluster-autoscaler-provider probe

  # The same over mTLS, with CA's cloud-config file
  cluster-autoscaler-provider probe --cloud-config /etc/ca/cloud-config.yaml

Flags:
`)
		fs.PrintDefaults()
	}
	return fs
}

// ProbeMain asks the server's gRPC health service whether the CloudProvider
// service is SERVING, over the same address and TLS settings CA uses. It is
// meant as a Kubernetes exec probe: the kubelet's own gRPC probe dials the pod
// IP in plaintext, so it can reach neither a loopback sidecar nor an mTLS
// listener, and the image has no shell to run a client. Exit 0 when serving,
// 1 when not (or unreachable), 2 on bad flags.
func ProbeMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var f Flags
	fs := NewProbeFlagSet(&f, stderr)
	if code, ok := parse(fs, args, stderr); !ok {
		return code
	}
	fail := func(code int, err error) int { return reportError(stderr, code, err) }
	conn, err := f.connection(fs)
	if err != nil {
		return fail(2, err)
	}
	conn.Tool = ProbeCommand
	cc, err := conn.Dial()
	if err != nil {
		return fail(2, err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(ctx, conn.Timeout)
	defer cancel()
	service := protos.CloudProvider_ServiceDesc.ServiceName
	resp, err := healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		return fail(1, fmt.Errorf("health check of %s: %w", conn.Address, err))
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return fail(1, fmt.Errorf("%s at %s is %s", service, conn.Address, resp.GetStatus()))
	}
	fmt.Fprintf(stdout, "%s at %s is SERVING\n", service, conn.Address)
	return 0
}
