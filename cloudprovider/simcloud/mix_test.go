package simcloud

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
)

func TestParseFaultMix(t *testing.T) {
	tests := []struct {
		spec   string
		shared float64
		want   FaultMix
	}{
		{"", 0, FaultMix{}},
		{"5xx:0.05,slow-applied:0.01", 0, FaultMix{Rates: []KindRate{{FaultServerError, 0.05}, {FaultSlowApplied, 0.01}}}},
		{" lost-answer:1 ", 0, FaultMix{Rates: []KindRate{{FaultLostAnswer, 1}}}},
		{"slow:0.1,hold=2.5s", 0, FaultMix{Rates: []KindRate{{FaultSlow, 0.1}}, Hold: 2500 * time.Millisecond}},
		// The soak's --faults: bare kinds share --fault-rate evenly.
		{"5xx,reset,malformed:0.1", 0.2, FaultMix{Rates: []KindRate{{FaultServerError, 0.1}, {FaultReset, 0.1}, {FaultMalformed, 0.1}}}},
	}
	for _, tc := range tests {
		got, err := ParseFaultMix(tc.spec, tc.shared)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseFaultMix(%q, %g) = %+v, %v; want %+v", tc.spec, tc.shared, got, err, tc.want)
		}
	}
}

func TestParseFaultMixRefuses(t *testing.T) {
	for spec, want := range map[string]string{
		"gremlins:0.1":             `unknown fault kind "gremlins"`,
		"5xx":                      `fault kind "5xx" has no rate`,
		"5xx:0":                    `rate "0"`,
		"5xx:1.5":                  `rate "1.5"`,
		"5xx:NaN":                  `rate "NaN"`,
		"5xx:lots":                 `rate "lots"`,
		"5xx:0.1,5xx:0.2":          "given twice",
		"5xx:0.6,reset:0.5":        "add up to 1.1",
		"slow:0.1,hold=-1s":        `hold "-1s"`,
		"slow:0.1,hold=1s,hold=2s": `hold "2s"`,
		"5xx:0.1,":                 `unknown fault kind ""`,
	} {
		if _, err := ParseFaultMix(spec, 0); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseFaultMix(%q) = %v, want an error with %q", spec, err, want)
		}
	}
}

func TestFaultMixStringRoundTrips(t *testing.T) {
	for _, m := range []FaultMix{
		Uniform(0.2, AllFaults...),
		{Rates: []KindRate{{FaultThrottle, 0.25}, {FaultSlowApplied, 0.01}}, Hold: 2500 * time.Millisecond},
	} {
		got, err := ParseFaultMix(m.String(), 0)
		if err != nil || !reflect.DeepEqual(got, m) {
			t.Errorf("ParseFaultMix(%q) = %+v, %v; want %+v", m.String(), got, err, m)
		}
	}
}

// TestChaosFollowsTheMix: each kind hits about its share of requests, and
// the rest pass.
func TestChaosFollowsTheMix(t *testing.T) {
	c := NewChaos(1)
	c.SetMix(FaultMix{Rates: []KindRate{{FaultServerError, 0.3}, {FaultReset, 0.1}}})
	const n = 20000
	for range n {
		c.Pick(fakecloud.FaultRequest{Method: http.MethodGet})
	}
	got := c.Injected()
	for kind, share := range map[FaultKind]float64{FaultServerError: 0.3, FaultReset: 0.1} {
		if f := float64(got[kind]) / n; f < share-0.02 || f > share+0.02 {
			t.Errorf("%s hit %.3f of requests, want about %.2f", kind, f, share)
		}
	}
	if len(got) != 2 || got[FaultServerError]+got[FaultReset]+c.Passed() != n {
		t.Errorf("injected %v, passed %d of %d", got, c.Passed(), n)
	}
}
