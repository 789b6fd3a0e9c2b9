package registry

import (
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudhttp"
)

var exoscaleZones = []string{"ch-gva-2", "de-fra-1"}

// TestDiagnosisFitsTheProvider: the fix for a host that does not resolve
// names what decides the host for that provider, and nothing it lacks.
func TestDiagnosisFitsTheProvider(t *testing.T) {
	t.Parallel()
	dns := func(host string) cloudhttp.Failure {
		return cloudhttp.Failure{Kind: cloudhttp.FailureDNS, Operation: "op", Host: host, Cause: &net.DNSError{Err: "no such host", Name: host}}
	}
	cases := []struct {
		name        string
		f           cloudhttp.Failure
		loc         Location
		ep          Endpoint
		wants, lack []string
	}{
		{"vultr default", dns("api.vultr.com"), Location{}, Endpoint{Host: "api.vultr.com", Setting: "api_url in --cloud-config"},
			[]string{"p: op: the API host api.vultr.com does not resolve (lookup api.vultr.com: no such host)", "calls go to api.vultr.com (api_url in --cloud-config overrides it)"}, []string{"zone", "region"}},
		{"exoscale known zone", dns("api-de-fra-1.exoscale.com"), Location{Name: "de-fra-1", Kind: "zone", Setting: "EXOSCALE_ZONE", Published: exoscaleZones},
			Endpoint{Host: "api-de-fra-1.exoscale.com", Setting: "EXOSCALE_API_ENDPOINT", ByLocation: true},
			[]string{"zone de-fra-1's endpoint is api-de-fra-1.exoscale.com"}, nil},
		{"exoscale unknown zone", dns("api-xx-bad-9.exoscale.com"), Location{Name: "xx-bad-9", Kind: "zone", Setting: "EXOSCALE_ZONE", Published: exoscaleZones},
			Endpoint{Host: "api-xx-bad-9.exoscale.com", Setting: "EXOSCALE_API_ENDPOINT", ByLocation: true},
			[]string{`zone "xx-bad-9" is not a known zone`, "check EXOSCALE_ZONE"}, []string{"zone xx-bad-9's endpoint"}},
		{"exoscale override", dns("exo.invalid"), Location{Name: "de-fra-1", Kind: "zone", Setting: "EXOSCALE_ZONE", Published: exoscaleZones},
			Endpoint{Host: "exo.invalid", Setting: "EXOSCALE_API_ENDPOINT", ByLocation: true, Overridden: true},
			[]string{"EXOSCALE_API_ENDPOINT sets this host"}, []string{"zone"}},
		{"volcengine region", dns("open.volcengineapi.com"), Location{Name: "cn-beijing", Kind: "region", Setting: "REGION_ID"},
			Endpoint{Host: "open.volcengineapi.com", Setting: "ENDPOINT"},
			[]string{"calls go to open.volcengineapi.com (ENDPOINT overrides it)"}, []string{"region"}},
		{"401", cloudhttp.Failure{Kind: cloudhttp.FailureUnauthenticated, Operation: "op", Status: 401}, Location{}, Endpoint{Credentials: "VULTR_API_KEY"},
			[]string{"authentication failed", "(HTTP 401)", "check VULTR_API_KEY"}, nil},
		{"403 without a page", cloudhttp.Failure{Kind: cloudhttp.FailurePermission, Operation: "op", Status: 403}, Location{}, Endpoint{},
			[]string{"permission refused (HTTP 403)", "docs/providers/p.md#permissions"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, ok := Diagnosis("p", tc.f, tc.loc, tc.ep)
			if !ok {
				t.Fatal("no diagnosis")
			}
			for _, w := range tc.wants {
				if !strings.Contains(got, w) {
					t.Errorf("lacks %q: %s", w, got)
				}
			}
			for _, l := range tc.lack {
				if strings.Contains(got, l) {
					t.Errorf("mentions %q: %s", l, got)
				}
			}
			if strings.Contains(got, "\n") {
				t.Errorf("more than one line: %q", got)
			}
		})
	}
	if _, ok := Diagnosis("p", cloudhttp.Diagnose(errors.New("boom"), nil), Location{}, Endpoint{}); ok {
		t.Error("an error that is no failed call got a diagnosis")
	}
}

func TestLocationWarning(t *testing.T) {
	t.Parallel()
	loc := Location{Name: "xx-bad-9", Kind: "zone", Setting: "EXOSCALE_ZONE", Published: exoscaleZones}
	if w := loc.Warning("exoscale"); !strings.Contains(w, `zone "xx-bad-9" (EXOSCALE_ZONE) is not a known exoscale zone (known: ch-gva-2, de-fra-1)`) {
		t.Errorf("Warning = %q", w)
	}
	for _, l := range []Location{{Name: "de-fra-1", Published: exoscaleZones}, {Name: "cn-beijing"}, {Published: exoscaleZones}} {
		if w := l.Warning("p"); w != "" {
			t.Errorf("%+v warns: %q", l, w)
		}
	}
}

// TestConfigWarnings: the location's warning comes first, then the
// provider's own, and a registration with neither warns of nothing.
func TestConfigWarnings(t *testing.T) {
	t.Parallel()
	reg := Registration{
		Location: func(BuildOptions) Location {
			return Location{Name: "xx-bad-9", Kind: "zone", Setting: "EXOSCALE_ZONE", Published: exoscaleZones}
		},
		Warnings: func(opts BuildOptions) []string { return []string{"id " + opts.CloudConfig + " looks odd"} },
	}
	got := reg.ConfigWarnings("exoscale", BuildOptions{CloudConfig: "c1"})
	if len(got) != 2 || !strings.Contains(got[0], `zone "xx-bad-9"`) || got[1] != "id c1 looks odd" {
		t.Fatalf("ConfigWarnings = %q, want the zone's warning, then the provider's", got)
	}
	if got := (Registration{}).ConfigWarnings("p", BuildOptions{}); len(got) != 0 {
		t.Fatalf("a registration without Location or Warnings warns %q", got)
	}
}
