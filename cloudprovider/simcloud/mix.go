package simcloud

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// KindRate is one fault kind and the share of requests (0..1) it hits.
type KindRate struct {
	Kind FaultKind
	Rate float64
}

// FaultMix is how a simulated cloud misbehaves: the share of requests each
// fault kind hits, and how long slow faults hold a request.
type FaultMix struct {
	// Rates are the kinds in the order given; their rates add up to at most 1.
	Rates []KindRate
	// Hold is how long slow and slow-applied faults hold a request (0: DefaultHold).
	Hold time.Duration
}

// Uniform is the mix in which rate (0..1) of the requests fail, each of
// kinds equally likely.
func Uniform(rate float64, kinds ...FaultKind) FaultMix {
	var m FaultMix
	for _, k := range kinds {
		m.Rates = append(m.Rates, KindRate{Kind: k, Rate: rate / float64(len(kinds))})
	}
	return m
}

// Empty reports a mix that injects nothing.
func (m FaultMix) Empty() bool {
	for _, kr := range m.Rates {
		if kr.Rate > 0 {
			return false
		}
	}
	return true
}

// String renders m in the syntax ParseFaultMix reads.
func (m FaultMix) String() string {
	parts := make([]string, 0, len(m.Rates)+1)
	for _, kr := range m.Rates {
		parts = append(parts, string(kr.Kind)+":"+strconv.FormatFloat(kr.Rate, 'g', -1, 64))
	}
	if m.Hold > 0 {
		parts = append(parts, "hold="+m.Hold.String())
	}
	return strings.Join(parts, ",")
}

// ParseFaultMix reads a comma-separated fault mix: kind:rate entries (rate
// between 0 and 1, e.g. 5xx:0.05) and an optional hold=DURATION for the slow
// kinds. A kind given without a rate takes an even share of shared, which
// must then be above 0 (the soak's --faults with its --fault-rate). The
// rates may add up to at most 1. "" is the empty mix.
func ParseFaultMix(spec string, shared float64) (FaultMix, error) {
	var m FaultMix
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return m, nil
	}
	var bare []int
	seen := map[FaultKind]bool{}
	holdSeen := false
	for _, entry := range strings.Split(spec, ",") {
		entry = strings.TrimSpace(entry)
		if v, ok := strings.CutPrefix(entry, "hold="); ok {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 || holdSeen {
				return FaultMix{}, fmt.Errorf("hold %q: want one positive duration, e.g. hold=30s", v)
			}
			m.Hold, holdSeen = d, true
			continue
		}
		name, rateText, hasRate := strings.Cut(entry, ":")
		kind := FaultKind(name)
		if !slices.Contains(AllFaults, kind) {
			return FaultMix{}, fmt.Errorf("unknown fault kind %q in %q: want kind:rate with kind one of %s", name, entry, FaultKinds())
		}
		if seen[kind] {
			return FaultMix{}, fmt.Errorf("fault kind %q given twice", name)
		}
		seen[kind] = true
		if !hasRate {
			if shared <= 0 {
				return FaultMix{}, fmt.Errorf("fault kind %q has no rate: give the share of requests it hits, e.g. %s:0.05", name, name)
			}
			bare = append(bare, len(m.Rates))
			m.Rates = append(m.Rates, KindRate{Kind: kind})
			continue
		}
		rate, err := strconv.ParseFloat(rateText, 64)
		if err != nil || math.IsNaN(rate) || rate <= 0 || rate > 1 {
			return FaultMix{}, fmt.Errorf("fault kind %q: rate %q is not a share above 0 and at most 1, e.g. %s:0.05", name, rateText, name)
		}
		m.Rates = append(m.Rates, KindRate{Kind: kind, Rate: rate})
	}
	for _, i := range bare {
		m.Rates[i].Rate = shared / float64(len(bare))
	}
	total := 0.0
	for _, kr := range m.Rates {
		total += kr.Rate
	}
	// A little slack for rates written in decimal that add up to 1.
	if total > 1+1e-9 {
		return FaultMix{}, fmt.Errorf("fault rates add up to %g: at most 1 (every request)", total)
	}
	return m, nil
}

// FaultKinds lists every fault kind, comma-separated.
func FaultKinds() string {
	names := make([]string, len(AllFaults))
	for i, k := range AllFaults {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}
