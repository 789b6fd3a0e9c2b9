package volcengine

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine/volcapi"
)

func TestParseDiscoverySpec(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw     string
		want    string
		wantErr bool
	}{
		{raw: "asg:tag=k8s.io/cluster-autoscaler/enabled", want: "[{k8s.io/cluster-autoscaler/enabled  true}]"},
		{raw: "asg:tag=team=ml,env=prod", want: "[{team ml false} {env prod false}]"},
		{raw: "asg:tag=team=ml,tag=env", want: "[{team ml false} {env  true}]"},
		{raw: "asg:tag=empty=", want: "[{empty  false}]"},
		{raw: "mig:tag=x", wantErr: true},
		{raw: "asg:name=x", wantErr: true},
		{raw: "asg:tag=", wantErr: true},
		{raw: "asg:tag==v", wantErr: true},
		{raw: "asg:tag=a,a=1", wantErr: true},
		{raw: "asg:tag=a,,b", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			t.Parallel()
			sel, err := parseDiscoverySpec(tc.raw)
			if tc.wantErr {
				if !errors.Is(err, cloudprovider.ErrInvalidArgument) {
					t.Fatalf("error = %v, want invalid argument", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []tagMatch
			got = append(got, sel.tags...)
			if s := fmt.Sprintf("%v", got); s != tc.want {
				t.Fatalf("tags = %s, want %s", s, tc.want)
			}
		})
	}
}

func TestParseDiscoverySpecsReportsAll(t *testing.T) {
	t.Parallel()
	_, err := parseDiscoverySpecs([]string{"bad1", "asg:tag=ok", "bad2"})
	if err == nil {
		t.Fatal("no error")
	}
	for _, w := range []string{`"bad1"`, `"bad2"`} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %s", err, w)
		}
	}
}

func TestSelectGroups(t *testing.T) {
	t.Parallel()
	all := []volcapi.ScalingGroup{
		{ID: "scg-a", Min: 1, Max: 5, HasMin: true, HasMax: true, Tags: map[string]string{"ca": "on"}},
		{ID: "scg-b", Tags: map[string]string{"ca": "off"}},
		{ID: "scg-c", Min: 0, Max: 3, HasMin: true, HasMax: true, Tags: map[string]string{"ca": "on", "gpu": "yes"}},
	}
	sel, _ := parseDiscoverySpecs([]string{"asg:tag=ca=on"})
	tests := []struct {
		name        string
		static      []string
		selectors   []tagSelector
		want        string
		wantMissing string
	}{
		{name: "static exact ids, spec bounds only when the group has none", static: []string{"2:9:scg-b", "1:2:scg-zzz"}, want: "[scg-b 2:9 --nodes (2:9:scg-b)]", wantMissing: "[scg-zzz]"},
		{name: "discovery", selectors: sel, want: "[scg-a 1:5 discovery (asg:tag=ca=on) scg-c 0:3 discovery (asg:tag=ca=on)]", wantMissing: "[]"},
		{name: "static wins over discovery", static: []string{"0:1:scg-c"}, selectors: sel, want: "[scg-c 0:3 --nodes (0:1:scg-c) scg-a 1:5 discovery (asg:tag=ca=on)]", wantMissing: "[]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			specs, err := groupconfig.ParseNodeGroupSpecs(tc.static)
			if err != nil {
				t.Fatal(err)
			}
			picked, resolved := selectGroups(all, specs, tc.selectors)
			var missing []string
			for _, s := range resolved.Unmatched {
				missing = append(missing, s.Name)
			}
			var got []string
			for _, p := range picked {
				minSize, maxSize := p.bounds()
				got = append(got, fmt.Sprintf("%s %d:%d %s", p.cloud.ID, minSize, maxSize, p.why))
			}
			if s := fmt.Sprint(got); s != tc.want {
				t.Fatalf("picked %s, want %s", s, tc.want)
			}
			if s := fmt.Sprint(append([]string{}, missing...)); s != tc.wantMissing {
				t.Fatalf("missing %s, want %s", s, tc.wantMissing)
			}
		})
	}
}
