package examples

import (
	"bytes"
	appsv1 "k8s.io/api/apps/v1"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	chartutil "helm.sh/helm/v4/pkg/chart/common/util"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
)

// providerChartDir is our own chart for the standalone layout.
const providerChartDir = "../charts/cluster-autoscaler-provider"

// providerChartRelease is the release name docs/deploy.md installs it with,
// which names the Service CA's standalone cloud-config dials.
const providerChartRelease = "cluster-autoscaler-provider"

// chartKubeVersion is what the tests render for: the lowest Kubernetes the
// chart's kubeVersion admits, which also has native sidecars.
var chartKubeVersion = common.KubeVersion{Version: "v1.29.0", Major: "1", Minor: "29"}

func loadProviderChart(t *testing.T) *chartv2.Chart {
	t.Helper()
	c, err := loader.LoadDir(providerChartDir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// renderProviderChart renders the chart with the values file and overrides
// (a later map wins) into kube-system, the way helm install would.
func renderProviderChart(t *testing.T, c *chartv2.Chart, valuesFile string, overrides ...map[string]any) (map[string]string, error) {
	t.Helper()
	vals := map[string]any{}
	if valuesFile != "" {
		b, err := os.ReadFile(valuesFile)
		if err != nil {
			t.Fatal(err)
		}
		if vals, err = loader.LoadValues(bytes.NewReader(b)); err != nil {
			t.Fatalf("%s: %v", valuesFile, err)
		}
	}
	for _, o := range overrides {
		vals = loader.MergeMaps(vals, o)
	}
	caps := common.DefaultCapabilities.Copy()
	caps.KubeVersion = chartKubeVersion
	rv, err := chartutil.ToRenderValues(c, vals, common.ReleaseOptions{Name: providerChartRelease, Namespace: "kube-system", IsInstall: true}, caps)
	if err != nil {
		return nil, err
	}
	return engine.Render(c, rv)
}

// decodeRendered decodes every rendered manifest strictly (NOTES.txt aside).
func decodeRendered(t *testing.T, files map[string]string) *objects {
	t.Helper()
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	o := newObjects()
	for _, name := range names {
		if strings.HasSuffix(name, "NOTES.txt") {
			continue
		}
		if err := decodeInto(o, []byte(files[name])); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	return o
}

// TestProviderChartMatchesTheStandaloneExamples renders the chart for each
// provider with examples/helm/standalone/provider-<provider>.yaml, decodes
// every object strictly, compares the provider with the kustomize
// standalone example, and then follows CA (the official chart with the
// standalone values) to it: Service, certificates, NetworkPolicy. The real
// binary checks the rendered arguments with --check-config.
func TestProviderChartMatchesTheStandaloneExamples(t *testing.T) {
	c := loadProviderChart(t)
	bin := providerBinary(t)
	caValues := loadChartValues(t, filepath.Join("helm", "standalone", "values.yaml"))
	for _, p := range providers {
		t.Run(p, func(t *testing.T) {
			files, err := renderProviderChart(t, c, filepath.Join("helm", "standalone", "provider-"+p+".yaml"),
				map[string]any{"podMonitor": map[string]any{"enabled": true}})
			if err != nil {
				t.Fatal(err)
			}
			o := decodeRendered(t, files)
			if len(o.deployments) != 1 || len(o.services) != 1 || len(o.netpols) != 1 || len(o.pdbs) != 1 || len(o.podMonitors) != 1 || len(o.certificates) != 3 || len(o.issuers) != 2 {
				t.Fatalf("want one Deployment, Service, NetworkPolicy, PDB, PodMonitor, three Certificates and two Issuers; got %d %d %d %d %d %d %d",
					len(o.deployments), len(o.services), len(o.netpols), len(o.pdbs), len(o.podMonitors), len(o.certificates), len(o.issuers))
			}
			prov, provC := findContainer(t, o, func(c corev1.Container) bool { return c.Name == providerContainer })
			k := build(t, "standalone/"+p)
			kprov, kprovC := findContainer(t, k, func(c corev1.Container) bool { return c.Name == providerContainer })
			// The chart spells out the pull policy the example leaves to the default.
			if provC.ImagePullPolicy != corev1.PullIfNotPresent {
				t.Errorf("imagePullPolicy %q", provC.ImagePullPolicy)
			}
			provC.ImagePullPolicy = kprovC.ImagePullPolicy
			if !apiequality.Semantic.DeepEqual(provC, kprovC) {
				t.Errorf("provider container differs from examples/standalone/%s:\nchart:     %+v\nkustomize: %+v", p, provC, kprovC)
			}
			// One provider at a time, also during a rollout: the old pod
			// stops before the new one starts (each has its own mutation guard).
			for what, d := range map[string]*appsv1.Deployment{"chart": prov, "examples/standalone/" + p: kprov} {
				if d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
					t.Errorf("%s: provider Deployment strategy %q, want Recreate", what, d.Spec.Strategy.Type)
				}
				if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 {
					t.Errorf("%s: provider Deployment wants exactly one replica", what)
				}
			}
			// The same scrape annotations as the example; the chart adds its
			// config checksum.
			annotations := map[string]string{}
			for k, v := range prov.Spec.Template.Annotations {
				if k != "checksum/config" {
					annotations[k] = v
				}
			}
			if !apiequality.Semantic.DeepEqual(annotations, kprov.Spec.Template.Annotations) {
				t.Errorf("pod annotations differ from examples/standalone/%s:\nchart:     %v\nkustomize: %v", p, annotations, kprov.Spec.Template.Annotations)
			}
			ps, kps := prov.Spec.Template.Spec, kprov.Spec.Template.Spec
			for what, pair := range map[string][2]any{
				"volumes":                      {byName(ps.Volumes), byName(kps.Volumes)},
				"pod securityContext":          {ps.SecurityContext, kps.SecurityContext},
				"automountServiceAccountToken": {ps.AutomountServiceAccountToken, kps.AutomountServiceAccountToken},
				"priorityClassName":            {ps.PriorityClassName, kps.PriorityClassName},
			} {
				if !apiequality.Semantic.DeepEqual(pair[0], pair[1]) {
					t.Errorf("%s differ from examples/standalone/%s:\nchart:     %+v\nkustomize: %+v", what, p, pair[0], pair[1])
				}
			}

			// CA from the official chart, beside this release in kube-system.
			all := renderChartObjects(t, caValues)
			mergeObjects(all, o)
			ca, caC := findContainer(t, all, func(c corev1.Container) bool { return c.Name == "cluster-autoscaler" })
			secrets := generatedSecrets(t, example{dir: p, provider: p})
			for name, s := range issueCertificates(t, all) {
				secrets[name] = s
			}
			for _, d := range all.deployments {
				checkPod(t, all, secrets, d)
			}
			checkPDBs(t, all)
			checkServiceTargets(t, all)
			checkMetricsServices(t, all, ca, caC, prov, provC, true)
			cfg := caCloudConfig(t, all, ca, caC)
			checkStandaloneLink(t, all, cfg, ca, caC, prov, provC)
			pm := o.podMonitors[0]
			if sel, err := metav1Selector(&pm.Spec.Selector); err != nil || !sel.Matches(labelsOf(prov)) || containerPort(provC, pm.Spec.PodMetricsEndpoints[0].Port) == 0 {
				t.Errorf("PodMonitor %s does not reach the provider's metrics port", pm.Name)
			}

			code, stdout, stderr := checkConfig(t, bin, o, secrets, prov, provC)
			if code != 0 || !strings.Contains(stdout, "configuration OK for "+p) {
				t.Fatalf("--check-config with the chart's arguments: exit %d, stdout %q, stderr %q", code, stdout, stderr)
			}
		})
	}
}

// mergeObjects adds src's objects to dst.
func mergeObjects(dst, src *objects) {
	dst.deployments = append(dst.deployments, src.deployments...)
	dst.services = append(dst.services, src.services...)
	dst.netpols = append(dst.netpols, src.netpols...)
	dst.pdbs = append(dst.pdbs, src.pdbs...)
	dst.certificates = append(dst.certificates, src.certificates...)
	dst.podMonitors = append(dst.podMonitors, src.podMonitors...)
	for k, v := range src.configMaps {
		dst.configMaps[k] = v
	}
	for k, v := range src.issuers {
		dst.issuers[k] = v
	}
}

// TestProviderChartRefusesBadValues: without a provider or with an unknown
// one, rendering fails with a message naming the value. (The cluster id,
// region and zone come from the credentials Secret, as with the in-tree
// providers, so no other value is required.)
func TestProviderChartRefusesBadValues(t *testing.T) {
	c := loadProviderChart(t)
	cases := []struct {
		name string
		vals map[string]any
		want string
	}{
		{"no provider", map[string]any{}, "provider is required"},
		{"unknown provider", map[string]any{"provider": "nimbus"}, `provider "nimbus"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := renderProviderChart(t, c, "", tc.vals)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("render error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestProviderChartLint runs Helm's own linter (what helm lint runs) on the
// bare chart and with each provider's values: no message at warning level
// or above.
func TestProviderChartLint(t *testing.T) {
	for _, p := range append([]string{"defaults"}, providers...) {
		t.Run(p, func(t *testing.T) {
			vals := map[string]any{}
			if p != "defaults" {
				b, err := os.ReadFile(filepath.Join("helm", "standalone", "provider-"+p+".yaml"))
				if err != nil {
					t.Fatal(err)
				}
				if vals, err = loader.LoadValues(bytes.NewReader(b)); err != nil {
					t.Fatal(err)
				}
			}
			res := lint.RunAll(providerChartDir, vals, "kube-system", lint.WithKubeVersion(&chartKubeVersion))
			for _, m := range res.Messages {
				if m.Severity >= support.WarningSev {
					t.Errorf("helm lint: %s", m)
				} else {
					t.Logf("helm lint: %s", m)
				}
			}
		})
	}
}
