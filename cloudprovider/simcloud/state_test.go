package simcloud

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
)

func TestStateHandlerServesTheTruthReadOnly(t *testing.T) {
	groups := []Group{{IDs: []string{"g1", "general"}, Desired: 2, Instances: []Instance{
		{ProviderID: "x://1", State: "active"}, {ProviderID: "x://2", State: "closed", Gone: true}}}}
	chaos := NewChaos(1)
	chaos.SetFaults(1, FaultReset)
	chaos.Pick(fakecloud.FaultRequest{Method: http.MethodGet})
	srv := httptest.NewServer(StateHandler(func() []Group { return groups }, chaos))
	defer srv.Close()

	st, err := ReadState(context.Background(), srv.Client(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	want := State{Groups: groups, Faults: map[FaultKind]int{FaultReset: 1}}
	if !reflect.DeepEqual(st, want) {
		t.Fatalf("state %+v, want %+v", st, want)
	}
	resp, err := srv.Client().Post(srv.URL, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("POST answered %d, want 405", resp.StatusCode)
	}
}

func TestReadStateReportsABadAnswer(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	if _, err := ReadState(context.Background(), srv.Client(), srv.URL); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("ReadState of a 404 = %v", err)
	}
}

func TestGroupsLeavesOutWhatTheFakeNoLongerHolds(t *testing.T) {
	t.Parallel()
	held := map[string]Group{"a": {IDs: []string{"a"}, Desired: 1}, "c": {IDs: []string{"c"}, Desired: 3}}
	got := Groups([]string{"c", "b", "a"}, func(id string) (Group, bool) {
		g, ok := held[id]
		return g, ok
	})
	if len(got) != 2 || got[0].IDs[0] != "c" || got[1].IDs[0] != "a" {
		t.Fatalf("Groups = %+v, want c then a, and no b", got)
	}
}
