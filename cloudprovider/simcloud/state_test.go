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
	held := map[string]int{"a": 1, "c": 3}
	lookup := func(id string) (int, bool) {
		size, ok := held[id]
		return size, ok
	}
	got := Groups([]string{"c", "b", "a"}, lookup, func(size int) Group { return Group{Desired: size} })
	if len(got) != 2 || got[0].Desired != 3 || got[1].Desired != 1 {
		t.Fatalf("Groups = %+v, want c (3) then a (1), and no b", got)
	}
}

func TestStateCountsTheCloudsRequests(t *testing.T) {
	t.Parallel()
	counts := map[string]int{"GET /pools": 3, "PATCH /pools/{id}": 1}
	srv := httptest.NewServer(stateHandler(func() []Group { return nil }, nil, func() map[string]int { return counts }))
	defer srv.Close()
	st, err := ReadState(context.Background(), srv.Client(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(st.Requests, counts) {
		t.Fatalf("requests %v, want %v", st.Requests, counts)
	}
}
