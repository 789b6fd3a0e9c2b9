// Package simcloud makes a simulated cloud misbehave the way real ones do and
// shows what it holds. Chaos injects faults at random (5xx, 429, resets,
// slow answers, requests applied after their caller gave up, malformed
// bodies, lost answers) through the fake kit's fault policy, in the mix a
// FaultMix gives; State is the fake cloud's own truth (groups, desired sizes,
// instances) served read-only, so a driver outside the process can check
// invariants that need it. --simulate-faults, the soak and the benchmark
// share it.
package simcloud

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
)

// StatePath is where the binary serves a simulation's State, on its
// --metrics-address, under --simulate only.
const StatePath = "/simulate/state"

// Instance is one machine as the fake cloud holds it.
type Instance struct {
	// ProviderID is what the Node's spec.providerID would be.
	ProviderID string `json:"providerID"`
	// State is the fake's own state name.
	State string `json:"state"`
	// Gone reports a machine that is being deleted or is deleted.
	Gone bool `json:"gone"`
}

// Group is a node group as the fake cloud holds it.
type Group struct {
	// IDs are every identifier the provider may use for the group.
	IDs []string `json:"ids"`
	// Desired is the cloud's desired size.
	Desired int `json:"desired"`
	// Instances are the group's machines, gone ones included while listed.
	Instances []Instance `json:"instances"`
}

// Groups is a fake cloud's truth about the groups with these ids, in their
// order: lookup reads one as the fake holds it, truth turns it into a Group.
// An id the fake no longer holds is left out, as a deleted group is.
func Groups[V any](ids []string, lookup func(id string) (V, bool), truth func(V) Group) []Group {
	out := make([]Group, 0, len(ids))
	for _, id := range ids {
		if v, ok := lookup(id); ok {
			out = append(out, truth(v))
		}
	}
	return out
}

// State is what a simulated cloud holds and how it misbehaved so far.
type State struct {
	Groups []Group `json:"groups"`
	// Faults counts the faults injected by kind.
	Faults map[FaultKind]int `json:"faults"`
	// Passed counts the requests no fault touched.
	Passed int `json:"passed"`
	// Requests counts every request the cloud received, by operation, so a
	// client's cloud calls can be counted at the cloud's side.
	Requests map[string]int `json:"requests,omitempty"`
}

// Wire makes a simulated cloud's API misbehave as spec says (ParseFaultMix
// without shared rate; "" injects nothing) and returns the handler serving
// its State, read from groups on every request.
func Wire(api *fakecloud.API, spec string, groups func() []Group) (http.Handler, error) {
	mix, err := ParseFaultMix(spec, 0)
	if err != nil {
		return nil, err
	}
	var chaos *Chaos
	if !mix.Empty() {
		chaos = NewChaos(time.Now().UnixNano())
		chaos.SetMix(mix)
		api.SetFaultPolicy(chaos.Pick)
	}
	return stateHandler(groups, chaos, api.OperationCounts), nil
}

// StateHandler serves State as JSON to GET requests; chaos may be nil.
func StateHandler(groups func() []Group, chaos *Chaos) http.Handler {
	return stateHandler(groups, chaos, nil)
}

func stateHandler(groups func() []Group, chaos *Chaos, requests func() map[string]int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			http.Error(w, "read-only: GET only", http.StatusMethodNotAllowed)
			return
		}
		st := State{Groups: groups(), Faults: map[FaultKind]int{}}
		if chaos != nil {
			st.Faults, st.Passed = chaos.Injected(), chaos.Passed()
		}
		if requests != nil {
			st.Requests = requests()
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(st)
	})
}

// ReadState fetches the State a StateHandler serves at url.
func ReadState(ctx context.Context, client *http.Client, url string) (State, error) {
	var st State
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return st, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return st, fmt.Errorf("simulated cloud state: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("simulated cloud state: %s from %s", resp.Status, url)
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return st, fmt.Errorf("simulated cloud state: %w", err)
	}
	return st, nil
}
