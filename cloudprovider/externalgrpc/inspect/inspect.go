package inspect

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/status"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
)

// Command is the subcommand's name on the binary's command line.
const Command = "inspect"

// Summary is the one line the binary's --help shows for the subcommand.
const Summary = "connect like the Cluster Autoscaler and print what it would see; --scale-up and --delete rehearse changes"

type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// Flags are the subcommand's command-line settings.
type Flags struct {
	Address     string
	CloudConfig string
	CertFile    string
	KeyFile     string
	CAFile      string
	Timeout     time.Duration
	Output      string
	Groups      stringList
	ScaleUp     stringList
	Delete      stringList
	Refresh     bool
}

// NewFlagSet declares the subcommand's flags into a new set writing usage to
// stderr. The docs test reads it to keep docs/flags.md in sync.
func NewFlagSet(f *Flags, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(Command, flag.ContinueOnError)
	fs.SetOutput(stderr)
	addConnectionFlags(fs, f)
	fs.StringVar(&f.Output, "o", "table", "output format: table or json")
	fs.StringVar(&f.Output, "output", "table", "output format: table or json (same as -o)")
	fs.Var(&f.Groups, "group", "show only this node group id; repeatable")
	fs.Var(&f.ScaleUp, "scale-up", "send NodeGroupIncreaseSize: <group id>=<delta>; repeatable (changes the cloud)")
	fs.Var(&f.Delete, "delete", "send NodeGroupDeleteNodes for the node with this providerID, its group found by NodeGroupForNode; repeatable (changes the cloud)")
	fs.BoolVar(&f.Refresh, "refresh", true, "send Refresh first (and again after mutations), as CA does before every loop; it changes nothing in the cloud")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `Usage: cluster-autoscaler-provider inspect [flags]

Connects to a provider server like the Cluster Autoscaler does and prints what
CA would see. Read-only unless --scale-up or --delete is given.

Exit codes: 0 the server gave a consistent view (and accepted every change);
1 it could not (unreachable, Refresh failed or not ready: the last good
snapshot is still printed, with the server's reason) or it refused a change;
2 bad flags.

Examples:
  # What CA sees from the server on the default address
  cluster-autoscaler-provider inspect

  # Connect exactly as CA does, with its cloud-config file (TLS included)
  cluster-autoscaler-provider inspect --cloud-config /etc/ca/cloud-config.yaml

  # Rehearse a scale-up of one group, as JSON for a script
  cluster-autoscaler-provider inspect --scale-up <group id>=1 -o json

Flags:
`)
		fs.PrintDefaults()
	}
	return fs
}

// addConnectionFlags declares how to reach the server, shared by inspect and probe.
func addConnectionFlags(fs *flag.FlagSet, f *Flags) {
	fs.StringVar(&f.Address, "address", DefaultAddress, "server address: host:port or unix:///path (overrides the cloud-config's address)")
	fs.StringVar(&f.CloudConfig, "cloud-config", "", "CA's externalgrpc cloud-config YAML (address, cert, key, cacert, grpc_timeout); connect exactly as CA would")
	fs.StringVar(&f.CertFile, "tls-cert-file", "", "client certificate (PEM); switches TLS on, as cert: does in CA's cloud-config")
	fs.StringVar(&f.KeyFile, "tls-key-file", "", "client private key (PEM)")
	fs.StringVar(&f.CAFile, "tls-ca-file", "", "CA bundle (PEM) that verifies the server; alone, it enables TLS without a client certificate")
	fs.DurationVar(&f.Timeout, "timeout", DefaultTimeout, "deadline of each call, like CA's grpc_timeout")
}

// parse parses args into fs; ok is false when the caller should return code.
// Mistakes get one error line: the flag package would follow it with the
// whole usage, which buries it; --help still prints the usage.
func parse(fs *flag.FlagSet, args []string, stderr io.Writer) (code int, ok bool) {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.SetOutput(stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.Usage()
			return 0, false
		}
		return reportError(stderr, 2, fmt.Errorf("%w (see --help)", err)), false
	}
	if fs.NArg() > 0 {
		return reportError(stderr, 2, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))), false
	}
	return 0, true
}

// reportError prints err as one line and returns code.
func reportError(stderr io.Writer, code int, err error) int {
	fmt.Fprintf(stderr, "error: %s\n", strings.ReplaceAll(err.Error(), "\n", "; "))
	return code
}

// connection merges the cloud-config file (if any) with explicitly set flags,
// flags winning.
func (f *Flags) connection(fs *flag.FlagSet) (Connection, error) {
	c := Connection{Address: DefaultAddress, Timeout: DefaultTimeout}
	if f.CloudConfig != "" {
		var err error
		if c, err = LoadCloudConfig(f.CloudConfig); err != nil {
			return Connection{}, err
		}
	}
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "address":
			c.Address = f.Address
		case "tls-cert-file":
			c.CertFile = f.CertFile
		case "tls-key-file":
			c.KeyFile = f.KeyFile
		case "tls-ca-file":
			c.CAFile = f.CAFile
		case "timeout":
			c.Timeout = f.Timeout
		}
	})
	return c, c.Validate()
}

// Main runs the subcommand with args (those after "inspect") and returns the
// exit code: 0 on success, 2 for bad flags, 1 when the server could not be
// read or refused a mutation.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var f Flags
	fs := NewFlagSet(&f, stderr)
	if code, ok := parse(fs, args, stderr); !ok {
		return code
	}
	fail := func(code int, err error) int { return reportError(stderr, code, err) }
	if f.Output != "table" && f.Output != "json" {
		return fail(2, fmt.Errorf("-o %q: want table or json", f.Output))
	}
	var ups []ScaleUp
	for _, s := range f.ScaleUp {
		u, err := ParseScaleUp(s)
		if err != nil {
			return fail(2, err)
		}
		ups = append(ups, u)
	}
	conn, err := f.connection(fs)
	if err != nil {
		return fail(2, err)
	}
	conn.Tool = Command
	cc, err := conn.Dial()
	if err != nil {
		return fail(2, err)
	}
	defer cc.Close()
	c := client{api: protos.NewCloudProviderClient(cc), timeout: conn.Timeout}

	res, err := run(ctx, c, conn.Address, f, ups)
	if res != nil {
		write := WriteTable
		if f.Output == "json" {
			write = WriteJSON
		}
		if werr := write(stdout, res); werr != nil && err == nil {
			err = werr
		}
	}
	if status.Code(err) == codes.Unavailable {
		err = unavailable(conn.Address, cc.GetState(), err)
	}
	if err != nil {
		return fail(1, err)
	}
	return 0
}

// unavailable tells the two things an Unavailable status means apart: the
// client could not connect (nothing listens, wrong address or TLS), or the
// server answered with Unavailable itself (its message says why). A
// connection that reached Ready carried the server's answer.
func unavailable(address string, state connectivity.State, err error) error {
	if state == connectivity.Ready || state == connectivity.Idle {
		st, _ := status.FromError(err)
		return fmt.Errorf("the server at %s answered Unavailable: %s", address, st.Message())
	}
	return fmt.Errorf("cannot connect to the server at %s (is it running, and are address and TLS settings right?): %w", address, err)
}

// errRefused reports that the server refused a mutation; the details are in
// the printed actions.
var errRefused = errors.New("the server refused a mutation (see actions)")

// inconsistent is the error of a run whose Refresh failed: the server
// answered from its last good snapshot, which CA would not act on, so a
// script must not read the output as the cloud's current state.
func inconsistent(r *Report) error {
	if r == nil || r.RefreshError == "" {
		return nil
	}
	return fmt.Errorf("the server's Refresh failed, so the output is its last good snapshot, not the cloud's current state: %s", r.RefreshError)
}

// refreshAndCollect refreshes (when asked) and reads the server. A failed Refresh is
// reported, not fatal: the server keeps serving its last snapshot, and seeing
// it is what an operator debugging a failing CA needs.
func (c client) refreshAndCollect(ctx context.Context, server string, f Flags) (*Report, error) {
	var refreshErr error
	if f.Refresh {
		refreshErr = c.refresh(ctx)
	}
	r, err := c.collect(ctx, server, f.Groups)
	if err != nil {
		if refreshErr != nil {
			return nil, errors.Join(refreshErr, err)
		}
		return nil, err
	}
	if refreshErr != nil {
		r.RefreshError = describe(errors.Unwrap(refreshErr))
	}
	return r, nil
}

func run(ctx context.Context, c client, server string, f Flags, ups []ScaleUp) (*Result, error) {
	before, err := c.refreshAndCollect(ctx, server, f)
	if err != nil {
		return nil, err
	}
	if len(ups) == 0 && len(f.Delete) == 0 {
		return &Result{Report: before}, inconsistent(before)
	}
	res := &Result{Before: before, Actions: []Action{}}
	for _, u := range ups {
		res.Actions = append(res.Actions, c.scaleUp(ctx, u))
	}
	if len(f.Delete) > 0 {
		acts, err := c.deleteNodes(ctx, f.Delete)
		res.Actions = append(res.Actions, acts...)
		if err != nil {
			return res, err
		}
	}
	if res.After, err = c.refreshAndCollect(ctx, server, f); err != nil {
		return res, err
	}
	for _, a := range res.Actions {
		if a.Error != "" {
			return res, errRefused
		}
	}
	return res, inconsistent(res.After)
}
