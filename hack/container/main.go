// Command container builds the provider's multi-platform OCI image without a
// container engine, and pushes it.
//
//	go build -C hack/container -o ../../bin/tools/container .
//	bin/tools/container build --provider=all --version=v0.6.0 --out=_out/oci/all
//	bin/tools/container push --layout=_out/oci/all --image=ghcr.io/me/cap --tag=v0.6.0
//
// It is a module of its own, so go-containerregistry stays out of the
// provider's go.mod; run from the repository's root, it compiles the provider
// there (--module-dir) with the root module. make container does both steps.
//
// The image is two layers on nothing: a base made here (CA certificates,
// passwd/group with the non-root user 65532, /tmp) and the static binary. All
// inputs are explicit and timestamps come from --source-date-epoch, so the
// same commit, flags and CA bundle give the same index digest on any machine
// with the same Go toolchain.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const defaultSource = "https://github.com/ca-providers/cluster-autoscaler-provider"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: container build|push [flags]")
		return 2
	}
	var err error
	switch args[0] {
	case "build":
		err = runBuild(ctx, args[1:], stdout, stderr)
	case "push":
		err = runPush(ctx, args[1:], stdout, stderr)
	default:
		fmt.Fprintf(stderr, "unknown command %q: want build or push\n", args[0])
		return 2
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "error: %s\n", err)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "error: %s\n", err)
		return 1
	}
	return 0
}

func runBuild(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("container build", flag.ContinueOnError)
	fs.SetOutput(stderr)
	provider := fs.String("provider", "all", "vultr, volcengine, exoscale or all")
	version := fs.String("version", "dev", "version stamped into the binary (-X main.version) and the version label")
	revision := fs.String("revision", "unknown", "source revision for the revision label (git commit)")
	source := fs.String("source", defaultSource, "source repository URL for the source label")
	epoch := fs.String("source-date-epoch", os.Getenv("SOURCE_DATE_EPOCH"), "Unix time for every timestamp in the image (default $SOURCE_DATE_EPOCH, else 0); use the commit time")
	platforms := fs.String("platforms", "linux/amd64,linux/arm64", "comma-separated os/arch list")
	ldflags := fs.String("ldflags", "", "go build -ldflags (default: -s -w -X main.version=<version>)")
	out := fs.String("out", "", "OCI layout folder to (re)create (default _out/oci/<provider>)")
	digestFile := fs.String("digest-file", "", "also write the index digest to this file")
	caBundle := fs.String("ca-bundle", "", "PEM CA bundle to install (default: the build host's system bundle)")
	goCmd := fs.String("go", "go", "go command")
	moduleDir := fs.String("module-dir", ".", "folder of the provider's main package")
	clusterAutoscaler := fs.Bool("cluster-autoscaler", false, "build the upstream Cluster Autoscaler with our providers in-tree instead (--module-dir: the tree make ca-src prepares); no -X main.version needed")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))}
	}
	tags, _, err := providerTags(*provider)
	if err != nil {
		return usageError{err}
	}
	if *clusterAutoscaler && tags == "" {
		// CA's build without tags (router_all.go) needs every upstream
		// provider; ours are chosen by their tags.
		tags = strings.Join(knownProviders, " ")
	}
	plats, err := ParsePlatforms(*platforms)
	if err != nil {
		return usageError{err}
	}
	created, err := parseEpoch(*epoch)
	if err != nil {
		return usageError{err}
	}
	if *ldflags == "" {
		*ldflags = "-s -w -X main.version=" + *version
		if *clusterAutoscaler {
			*ldflags = "-s -w"
		}
	}
	if !*clusterAutoscaler && !strings.Contains(*ldflags, "main.version=") {
		return usageError{errors.New("--ldflags must stamp -X main.version, or the binary reports \"dev\"")}
	}
	if *out == "" {
		*out = "_out/oci/" + *provider
		if *clusterAutoscaler {
			*out = "_out/oci/ca-" + *provider
		}
	}
	bundle, bundlePath, err := readCABundle(*caBundle)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "cap-container-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	cc := compileConfig{goCmd: *goCmd, moduleDir: *moduleDir, tags: tags, ldflags: *ldflags}
	bins := map[Platform][]byte{}
	for _, p := range plats {
		start := time.Now()
		b, err := compile(ctx, cc, p, tmp)
		if err != nil {
			return err
		}
		bins[p] = b
		fmt.Fprintf(stderr, "built %s binary for %s (%d bytes, %s)\n", *provider, p, len(b), time.Since(start).Round(time.Millisecond))
	}
	idx, err := BuildIndex(ImageSpec{
		Provider: *provider,
		Version:  *version,
		Revision: *revision,
		Source:   *source,
		Created:  created,
		CABundle: bundle,
		Binaries: bins,
		Order:    plats,

		ClusterAutoscaler: *clusterAutoscaler,
	})
	if err != nil {
		return err
	}
	d, err := writeLayout(*out, idx, *version)
	if err != nil {
		return err
	}
	if *digestFile != "" {
		if err := os.WriteFile(*digestFile, []byte(d.String()+"\n"), 0o644); err != nil {
			return fmt.Errorf("write digest: %w", err)
		}
	}
	fmt.Fprintf(stderr, "CA bundle: %s\n", bundlePath)
	fmt.Fprintf(stdout, "%s %s\n", *out, d)
	return nil
}

func runPush(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("container push", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("layout", "", "OCI layout written by build (required)")
	image := fs.String("image", "", "<registry>/<repository> (required)")
	tag := fs.String("tag", "", "tag to push (required)")
	insecure := fs.Bool("insecure", false, "allow plain HTTP to the registry")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))}
	}
	var missing []string
	for _, f := range []struct{ name, v string }{{"--layout", *dir}, {"--image (IMAGE=)", *image}, {"--tag (TAG=)", *tag}} {
		if f.v == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return usageError{fmt.Errorf("missing %s", strings.Join(missing, ", "))}
	}
	idx, err := loadLayoutIndex(*dir)
	if err != nil {
		return err
	}
	ref, err := push(ctx, idx, pushOptions{image: *image, tag: *tag, insecure: *insecure})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "pushed %s:%s\n%s\n", *image, *tag, ref)
	return nil
}

// usageError marks bad flags, which exit 2 like the provider binary.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// parseEpoch reads SOURCE_DATE_EPOCH; empty means the Unix epoch, so a build
// without it is still reproducible.
func parseEpoch(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return time.Time{}, fmt.Errorf("--source-date-epoch %q: want a non-negative Unix time in seconds", s)
	}
	return time.Unix(n, 0).UTC(), nil
}

// lookGo finds the go command that runs this program or its tests.
func lookGo() (string, error) {
	return exec.LookPath("go")
}
