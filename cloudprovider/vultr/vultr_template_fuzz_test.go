package vultr

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr/vultrapi"
)

// FuzzPoolTemplate parses a node pool as the API returns it (labels and
// taints included) and builds its template node: no panic, the template
// survives CA's protobuf round trip, keeps the pool's taints, and the labels
// CA relies on cannot be overridden by pool labels.
func FuzzPoolTemplate(f *testing.F) {
	f.Add(`{"id":"p","label":"general","labels":{"workload":"general"},"taints":[{"key":"k","value":"v","effect":"NoSchedule"}]}`, "vc2-2c-4gb", 2, 4096)
	f.Add(`{"id":"p","label":"x","labels":{"kubernetes.io/os":"windows","node.kubernetes.io/instance-type":"evil"}}`, "vcg-a16", 6, 65536)
	f.Add(`{"labels":{"":""},"taints":[{"key":"","effect":"Bogus"}]}`, "", -1, -1)
	f.Add(`{"taints":null,"labels":null}`, "p", 0, 0)
	f.Fuzz(func(t *testing.T, poolJSON, plan string, vcpus, ramMiB int) {
		var pool vultrapi.NodePool
		if err := json.Unmarshal([]byte(poolJSON), &pool); err != nil {
			return
		}
		node := buildTemplate("group", pool, planInfo{ID: plan, VCPUs: vcpus, RAMMiB: ramMiB}, "ewr", groupconfig.ParseGroupSettings(settingsSource, pool.Labels))
		b, err := node.Marshal()
		if err != nil {
			t.Fatalf("template does not marshal: %v", err)
		}
		var back corev1.Node
		if err := back.Unmarshal(b); err != nil {
			t.Fatalf("template does not unmarshal: %v", err)
		}
		if len(back.Spec.Taints) != len(pool.Taints) {
			t.Fatalf("template has %d taints, pool %d", len(back.Spec.Taints), len(pool.Taints))
		}
		if back.Labels[corev1.LabelOSStable] != "linux" || back.Labels[corev1.LabelInstanceTypeStable] != plan || back.Labels[LabelNodePool] != pool.Label {
			t.Fatalf("pool labels override the template's own: %v", back.Labels)
		}
	})
}
