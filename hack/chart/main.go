// Command chart lints and packages the provider's Helm chart with the Helm
// Go library, so make chart needs no helm binary.
//
//	go build -C hack/chart -o ../../bin/tools/chart .
//	bin/tools/chart -out _out/charts -values a.yaml -values b.yaml charts/cluster-autoscaler-provider
//
// It is a module of its own, so Helm stays out of the provider's go.mod; make
// chart builds and runs it.
//
// The chart is linted and rendered once per -values file: Helm's linter
// treats required and fail as soft, so the render (as helm install would
// do it) is what catches values the chart refuses. Any lint message at
// warning level or above fails too. The package is <name>-<version>.tgz in -out.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"helm.sh/helm/v4/pkg/chart/common"
	commonutil "helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/engine"
)

// lintKubeVersion is the lowest Kubernetes the chart admits (kubeVersion).
var lintKubeVersion = common.KubeVersion{Version: "v1.29.0", Major: "1", Minor: "29"}

type valueFiles []string

func (v *valueFiles) String() string     { return strings.Join(*v, ",") }
func (v *valueFiles) Set(s string) error { *v = append(*v, s); return nil }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("chart", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "_out/charts", "directory for the packaged chart")
	var values valueFiles
	fs.Var(&values, "values", "values file to lint with; repeatable (at least one)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 || len(values) == 0 {
		fmt.Fprintln(stderr, "error: want one chart directory and at least one -values file")
		return 2
	}
	path, err := lintAndPackage(fs.Arg(0), values, *out)
	if err != nil {
		fmt.Fprintf(stderr, "error: %s\n", strings.ReplaceAll(err.Error(), "\n", "; "))
		return 1
	}
	fmt.Fprintf(stdout, "Packaged %s\n", path)
	return 0
}

// lintAndPackage lints dir with each values file and writes the package.
func lintAndPackage(dir string, values []string, out string) (string, error) {
	c, err := loader.LoadDir(dir)
	if err != nil {
		return "", err
	}
	caps := common.DefaultCapabilities.Copy()
	caps.KubeVersion = lintKubeVersion
	var problems []error
	for _, f := range values {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		vals, err := loader.LoadValues(bytes.NewReader(b))
		if err != nil {
			return "", fmt.Errorf("%s: %w", f, err)
		}
		rv, err := commonutil.ToRenderValues(c, vals, common.ReleaseOptions{Name: c.Name(), Namespace: "kube-system", IsInstall: true}, caps)
		if err == nil {
			_, err = engine.Render(c, rv)
		}
		if err != nil {
			problems = append(problems, fmt.Errorf("render with %s: %w", f, err))
		}
		// A copy: the linter takes a pointer, which must not reach the
		// package's own value.
		kubeVersion := lintKubeVersion
		res := lint.RunAll(dir, vals, "kube-system", lint.WithKubeVersion(&kubeVersion))
		for _, m := range res.Messages {
			if m.Severity >= support.WarningSev {
				problems = append(problems, fmt.Errorf("lint with %s: %s", f, m))
			}
		}
	}
	if len(problems) > 0 {
		return "", errors.Join(problems...)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	return chartutil.Save(c, out)
}
