package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/inspect"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
)

// binaryName is how usage texts name the binary.
const binaryName = "cluster-autoscaler-provider"

// command is one subcommand of the binary: the first argument selects it.
type command struct {
	name, summary string
	main          func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

// commands are listed in this order by --help.
func commands() []command {
	return []command{
		{inspect.Command, inspect.Summary, inspect.Main},
		{inspect.ProbeCommand, inspect.ProbeSummary, inspect.ProbeMain},
		{PreflightCommand, "check the configuration against the real cloud with read calls only; run it before kubectl apply", preflightMain},
		{"help", "show help for the server or a command: help [command]", helpMain},
	}
}

func commandByName(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// helpMain is "help [command]": the server's usage, or the command's (its
// own --help), on stdout.
func helpMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		printServerUsage(stdout)
		return 0
	case len(args) > 1:
		fmt.Fprintf(stderr, "error: help takes one command, got %s\n", strings.Join(args, " "))
		return 2
	case args[0] == "help" || args[0] == "-h" || args[0] == "--help" || args[0] == "-help":
		printServerUsage(stdout)
		return 0
	}
	cmd, ok := commandByName(args[0])
	if !ok {
		fmt.Fprintf(stderr, "error: unknown command %q: choose one of %s\n", args[0], strings.Join(commandNames(), ", "))
		return 2
	}
	return cmd.main(ctx, []string{"--help"}, stdout, stdout)
}

func commandNames() []string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return names
}

// loggingFlagNames are klog's flags, which the server accepts but lists
// apart from its own.
func loggingFlagNames() map[string]bool {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	names := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { names[f.Name] = true })
	return names
}

// printServerUsage is the server's --help, laid out like kubectl's: what it
// does, the commands, examples, its own flags, then klog's flags apart.
func printServerUsage(w io.Writer) {
	fmt.Fprintf(w, `%[1]s serves %[2]s node groups to the unmodified Cluster Autoscaler
through its externalgrpc cloud provider.

Usage:
  %[1]s [flags]              serve (the default)
  %[1]s <command> [flags]

Commands:
`, binaryName, strings.Join(registry.CloudProviders(), ", "))
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, `
Examples:
  # Try it without an account: a simulated cloud, then look at it like CA does
  %[1]s --cloud-provider vultr --simulate
  %[1]s inspect

  # Before deploying: check credentials, zone, --nodes and templates with read calls
  %[1]s preflight --cloud-provider exoscale --nodes 1:10:workers

`, binaryName)
	printFlagSections(w, "Flags:", "Logging flags (klog):")
	fmt.Fprintf(w, "\nUse \"%s help <command>\" for a command's flags and examples.\n", binaryName)
}

// printFlagSections prints a fresh server flag set (so defaults show, not
// values parsed so far) in two sections: ours, then klog's.
func printFlagSections(w io.Writer, ours, logging string) {
	var cfg config
	all := newFlagSet(&cfg, io.Discard)
	klogNames := loggingFlagNames()
	own := flag.NewFlagSet(binaryName, flag.ContinueOnError)
	logs := flag.NewFlagSet("klog", flag.ContinueOnError)
	all.VisitAll(func(f *flag.Flag) {
		if klogNames[f.Name] {
			logs.Var(f.Value, f.Name, f.Usage)
		} else {
			own.Var(f.Value, f.Name, f.Usage)
		}
	})
	for _, s := range []struct {
		title string
		fs    *flag.FlagSet
	}{{ours, own}, {logging, logs}} {
		fmt.Fprintln(w, s.title)
		s.fs.SetOutput(w)
		s.fs.PrintDefaults()
		fmt.Fprintln(w)
	}
}

// printCommandUsage is the usage of a command that takes the server's flags
// (preflight).
func printCommandUsage(w io.Writer, name string, _ *flag.FlagSet) {
	fmt.Fprintf(w, `Usage: %[1]s %[2]s [server flags]

Checks the configuration against the real cloud before deployment, with the
same flags and environment as the server and read calls only: authenticates,
lists the node groups, resolves every --nodes spec and discovery rule, reads
each group's instances, builds its template and reads its price, then prints
one summary. Write permissions cannot be proven by reads and are not checked.

Exit codes: 0 all reads worked (warnings may be printed); 1 the cloud could not
be read (credentials, a refused permission, a zone or region the cloud does not
answer for, an unreachable endpoint); 2 bad configuration (flags, a --nodes spec
matching no group), as the server exits.

Examples:
  # Exoscale, with the Secret's values in the environment
  EXOSCALE_API_KEY=... EXOSCALE_API_SECRET=... EXOSCALE_ZONE=ch-gva-2 \
    %[1]s %[2]s --cloud-provider exoscale --nodes 1:10:workers

  # Against the simulated cloud (no account needed)
  %[1]s %[2]s --cloud-provider vultr --simulate

`, binaryName, name)
	printFlagSections(w, "Flags (the server's):", "Logging flags (klog):")
}
