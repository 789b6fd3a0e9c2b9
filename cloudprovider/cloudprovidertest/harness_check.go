package cloudprovidertest

import (
	"net/http"
	"slices"
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	corev1 "k8s.io/api/core/v1"
)

// checkHarnessHooks makes sure a harness's fault and cloud hooks reach its
// fake cloud, so the checks built on them test the provider and not a hook
// that does nothing: a refused mutation request fails the mutation, and an
// instance launched behind the provider's back shows up after a Refresh.
func checkHarnessHooks(t *testing.T, k *kit) {
	injects, whyNot := hookPresent(t, k.h, k.env, HookInjectMutationFault)
	launches, whyNotLaunch := hookPresent(t, k.h, k.env, HookAddUnseenInstance)
	if !injects && !launches {
		t.Skip(whyNot + "; " + whyNotLaunch)
	}
	g := k.mainGroup()
	id := g.Id(k.ctx())
	if k.env.InjectMutationFault != nil {
		// 400 is retried by no client, so one fault fails one mutation.
		refused := fakecloud.Fault{Status: http.StatusBadRequest, Message: "refused by the harness check"}
		k.env.InjectMutationFault(MutationIncreaseSize, refused)
		if err := g.IncreaseSize(k.ctx(), 1); err == nil {
			t.Fatal("IncreaseSize succeeded through an injected 400: InjectMutationFault misses the resize request")
		}
		k.refresh()
		g = k.group(id)
		k.env.InjectMutationFault(MutationDeleteNodes, refused)
		victim := k.nodes(g)[0]
		if err := g.DeleteNodes(k.ctx(), []*corev1.Node{k.env.Node(victim)}); err == nil {
			t.Fatal("DeleteNodes succeeded through an injected 400: InjectMutationFault misses the delete request")
		}
		k.refresh()
		g = k.group(id)
	}
	if k.env.AddUnseenInstance != nil {
		before := len(k.nodes(g))
		providerID := k.env.AddUnseenInstance(id)
		if len(k.nodes(g)) != before {
			t.Fatal("AddUnseenInstance changed the snapshot before any Refresh")
		}
		k.refresh()
		var ids []string
		for _, in := range k.nodes(k.group(id)) {
			ids = append(ids, in.Id)
		}
		if !slices.Contains(ids, providerID) || len(ids) != before+1 {
			t.Fatalf("after AddUnseenInstance and Refresh the group lists %v, want %d instances including %s", ids, before+1, providerID)
		}
	}
}
