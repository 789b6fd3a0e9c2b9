package registry

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/simcloud"
)

// stubProvider stands for the provider a Simulator builds; StartSimulation
// only hands it on.
type stubProvider struct{ cloudprovider.CloudProvider }

func newFake() *fakecloud.API {
	return fakecloud.NewAPI(fakecloud.APIConfig{Routes: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})})
}

func oneGroup() []simcloud.Group { return []simcloud.Group{{IDs: []string{"g-1"}, Desired: 2}} }

func TestStartSimulationBuildsAgainstTheServedFake(t *testing.T) {
	t.Parallel()
	fake := newFake()
	var builtFor string
	p := stubProvider{}
	sim, err := StartSimulation("demo", fake, BuildOptions{}, oneGroup, func(endpoint string) (cloudprovider.CloudProvider, error) {
		builtFor = endpoint
		return p, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	if sim.URL == "" || builtFor != sim.URL || fake.URL() != sim.URL || sim.Provider != p {
		t.Fatalf("URL %q, built for %q, fake at %q, provider %v: want the provider built against the fake's endpoint", sim.URL, builtFor, fake.URL(), sim.Provider)
	}
	rec := httptest.NewRecorder()
	sim.State.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, simcloud.StatePath, nil))
	if !strings.Contains(rec.Body.String(), `"ids":["g-1"]`) {
		t.Errorf("state %s does not hold the fake's groups", rec.Body.String())
	}
	sim.Close()
	if fake.URL() != "" {
		t.Errorf("the Simulation's Close left the fake serving at %s", fake.URL())
	}
}

func TestStartSimulationClosesTheFakeWhenAStepFails(t *testing.T) {
	t.Parallel()
	refused := errors.New("no provider today")
	for name, tc := range map[string]struct {
		faults string
		build  error
		want   string
	}{
		"a bad fault mix": {faults: "no-such-fault=1", want: "demo simulation: --simulate-faults: "},
		"a failed build":  {build: refused, want: refused.Error()},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fake := newFake()
			built := false
			_, err := StartSimulation("demo", fake, BuildOptions{SimulateFaults: tc.faults}, oneGroup, func(string) (cloudprovider.CloudProvider, error) {
				built = true
				return nil, tc.build
			})
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to start with %q", err, tc.want)
			}
			if tc.build == nil && built {
				t.Error("the provider was built although the faults were refused")
			}
			if fake.URL() != "" {
				t.Errorf("the fake still serves at %s after the failure", fake.URL())
			}
		})
	}
}

func TestSimulationCredentialPrefersTheEnvironment(t *testing.T) {
	// Not parallel: t.Setenv changes the process's environment.
	const env = "ZZ_TEST_SIMULATION_CREDENTIAL"
	t.Setenv(env, "  from-env \n")
	if got := SimulationCredential(env, "dummy"); got != "from-env" {
		t.Errorf("with %s set: %q, want the trimmed value", env, got)
	}
	t.Setenv(env, "  ")
	if got := SimulationCredential(env, "dummy"); got != "dummy" {
		t.Errorf("with %s blank: %q, want the dummy", env, got)
	}
}
