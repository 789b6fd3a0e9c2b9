// Package cloudprovidertest is the conformance kit every provider runs against
// its fake cloud (built on package fakecloud), and an in-memory provider used
// to test the kit and the server. It is test code: only tests and test-only
// packages import it.
//
// The kit checks the rules of the externalgrpc contract that do not depend on a
// particular cloud: resize bounds enforced before any cloud call, ownership
// checks on deletion, the min rule for registered versus never-registered
// nodes, TargetSize following mutations at once, lookups by providerID,
// concurrency safety, and the state those rules protect: an instance being
// deleted until the cloud agrees (groupstate.DeletingGrace), and a listing
// older than a mutation keeping the mutation's effect.
package cloudprovidertest

import (
	"fmt"
	"net/http"
	"testing"

	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
)

// Env is one provider bound to a freshly seeded fake cloud.
//
// The seed must contain at least one node group ("the main group") with
// min >= 1, at least min+1 running instances, all of them registered, and
// target+2 <= max. A second group makes the cross-group deletion checks stronger.
//
// Every hook marked optional (see Hooks) that a harness leaves nil needs its
// reason in Harness.NotApplicable: the checks needing it then skip with
// "not applicable: " and the reason, and fail without one.
type Env struct {
	// Provider talks to the fake cloud. The kit calls Refresh before using it.
	Provider cloudprovider.CloudProvider
	// CloudCalls returns how many requests the fake cloud has received so far.
	CloudCalls func() int
	// Node returns the Kubernetes Node a registered instance has: its
	// providerID and the labels the cloud puts on it.
	Node func(inst cloudprovider.Instance) *corev1.Node
	// Settle makes the fake cloud finish pending work (provisioning, removal)
	// without waiting. Optional.
	Settle func()
	// FailNextCalls makes the fake cloud fail its next n requests with a server
	// error; n = 0 clears any failures still pending. Optional; enables the
	// failed-Refresh checks.
	FailNextCalls func(n int)

	// InjectMutationFault queues f for the requests the provider sends to
	// carry out one kind of mutation; the harness fills f's selector (Method,
	// PathContains, Operation) for its cloud, the check sets the answer
	// (Status, RetryAfter, Hang, Malformed, AfterApply, Reset) and Times.
	// Reads are never hit. Where two kinds send the same request (a resize,
	// for IncreaseSize and DecreaseTargetSize) the fault hits whichever comes
	// first. Optional; enables the mutation-fault checks.
	InjectMutationFault func(kind Mutation, f fakecloud.Fault)
	// AddUnseenInstance makes the fake cloud launch one running instance in
	// the group without the provider hearing of it (no Refresh): when the
	// cloud's target is above its instance count the instance fills one
	// unfulfilled request, otherwise the cloud's target rises by one, as when
	// another actor scales the group. It returns the instance's providerID.
	// Optional; enables the fresh-read-before-shrink check.
	AddUnseenInstance func(groupID string) string
	// AddFailedInstance makes the fake cloud hold one more instance of the
	// group that failed to start (the provider reports it, after a Refresh,
	// as a failed creation), counted in the cloud's target the way the
	// cloud counts it; it returns the instance's providerID. Optional;
	// enables the failed-instance part of the deletion check.
	AddFailedInstance func(groupID string) string
	// FailNextScaleUp makes the fake cloud accept the group's next
	// scale-up and then fail to fill it, so that after Settle and Refresh
	// the provider reports the unfilled slot as a failed creation (a
	// placeholder). Optional; enables the failed-slot part of the deletion
	// check.
	FailNextScaleUp func(groupID string)
	// ListScaleUpLate makes the fake cloud list the instances of the
	// group's next scale-up only after Settle, as a cloud whose listing
	// lags a request it took: it holds them (a smaller size meanwhile
	// removes them or others, as the cloud picks) or starts them later.
	// Optional; enables the check of a decrease before the new instance
	// is listed.
	ListScaleUpLate func(groupID string)
	// HoldRemoval makes the fake cloud, once it accepts the deletion of the
	// instance (a providerID), keep listing the instance as it was (live)
	// until Settle: a removal the cloud took while its listing has not
	// caught up. Optional; enables the deleting-grace check (a nil hook needs its
	// reason in Harness.NotApplicable).
	HoldRemoval func(providerID string)
	// InjectListingFault queues f for the listing a Refresh reads the
	// groups' target sizes from (the first request of that kind); the
	// harness fills f's selector (Method, PathContains, Operation) for its
	// cloud, the check sets the answer (Release, AnswerOnArrival, Arrived).
	// Optional; enables the stale-listing check (a nil hook needs its
	// reason in NotApplicable).
	InjectListingFault func(f fakecloud.Fault)
	// FailEnrichmentLookups makes every lookup that only enriches a template
	// (Volcengine DescribeSubnets and DescribeImages) fail with the cloud's
	// permission error from now on. Optional; nil when the provider makes no
	// such lookup.
	FailEnrichmentLookups func()
	// ClearFaults drops every fault still queued. Optional; enables the
	// lost-answer check.
	ClearFaults func()
	// ReportMutationFailed makes the fake cloud answer the next mutation of
	// kind with its own report that the change failed, the way the cloud
	// sends one in a success answer: an Exoscale operation that ended in
	// "failure"; a Volcengine HTTP 200 whose body carries
	// ResponseMetadata.Error. Optional; nil where the cloud reports a failed
	// change only as an HTTP error status (Vultr), which the refusal check
	// covers.
	ReportMutationFailed func(kind Mutation)
	// RefuseForQuota makes the fake cloud refuse scale-ups for lack of quota
	// or capacity, answering as the cloud documents. Optional; nil when the
	// cloud documents no such answer (Vultr).
	RefuseForQuota func()
	// RemovesOnlyInService says the cloud removes only instances that have
	// finished starting, and never lets its target below min (Volcengine:
	// RemoveInstances takes InService instances only; a removal below min
	// keeps the desired number and the group replaces the instance). The
	// min-rule check then expects a still-starting instance's deletion to be
	// refused with FailedPrecondition and no cloud call, lets provisioning
	// finish before deleting the never-registered instance, and expects the
	// target to stay at min with that instance reported as deleting.
	RemovesOnlyInService bool
	// SetGroupSettings stores seed on the group in the cloud, where and in
	// the spelling the provider reads per-group settings (see SettingsSeed's
	// AWSKeys and NodeLabels); labels and taints go where the cloud keeps the
	// group's own when it has them. Required: the settings check fails
	// without it.
	SetGroupSettings func(groupID string, seed SettingsSeed)

	// Clock is the clock the provider measures the age of its reads with
	// (and its fake cloud its lag): the staleness check moves it past
	// --max-staleness. Optional; enables that check.
	Clock *fakecloud.ManualClock
	// Budget is what a Refresh may cost this provider in cloud calls.
	// Optional; enables the budget checks.
	Budget *RefreshBudget
	// ChangeUnseen makes a change to one running instance of the group in
	// the fake cloud without the provider hearing of it, one the provider's
	// cheapest read (the group list) does not show where the cloud has such
	// a change, and returns how to recognise it among the group's
	// instances. Optional; enables the staleness check.
	ChangeUnseen func(groupID string) (shows func([]cloudprovider.Instance) bool, what string)
	// SpecNames returns the names besides its id by which a --nodes spec
	// may name the group (a pool label, an instance-pool or nodepool name);
	// nil when specs name groups by id only. Optional; enables the
	// by-id-and-by-name part of the two-specs check.
	SpecNames func(groupID string) []string

	// TemplateGroups declares the groups of the seed whose TemplateNodeInfo
	// builds a template; every other group must answer ErrNotImplemented.
	// The template check fails for a declared group that answers none, so
	// it never passes by finding no template to check. Optional (empty
	// needs its reason, as for a nil hook).
	TemplateGroups []string
	// OptionsGroups declares the groups of the seed whose GetOptions
	// answers options before the settings check stores any; every other
	// group must answer ErrNotImplemented. Optional, as TemplateGroups.
	OptionsGroups []string

	// Permissions is the policy the fake cloud enforces in this Env: the
	// least-privilege policy the deployment example ships (read from
	// examples/), so every check runs with exactly the rights the docs tell
	// operators to grant, and a call outside them is refused the way the
	// cloud refuses it. Optional, for a cloud whose credentials carry no
	// per-operation rights.
	Permissions *fakecloud.Permissions
}

// RefreshBudget is the budget of cloud calls per Refresh, with this
// provider's numbers.
type RefreshBudget struct {
	// Unchanged bounds a Refresh where nothing changed and no read is older
	// than --max-staleness (one call per cloud is the goal).
	Unchanged int
	// GroupPages returns how many requests listing the group's instances
	// takes in this cloud (0 when the group list already carries them).
	GroupPages func(groupID string) int
	// AfterScaleUpExcess is how many calls a Refresh right after an
	// IncreaseSize(1) of one group still makes above Unchanged + 1 + that
	// group's pages. 0 meets the budget; anything else is a known gap the
	// check logs, and the check fails once the provider does better, so the
	// number only goes down.
	AfterScaleUpExcess int
}

// Mutation names the kind of mutation a fault is injected into.
type Mutation string

// The three mutations CA asks of a node group.
const (
	MutationIncreaseSize       Mutation = "IncreaseSize"
	MutationDecreaseTargetSize Mutation = "DecreaseTargetSize"
	MutationDeleteNodes        Mutation = "DeleteNodes"
)

// Mutations lists every Mutation, for checks that cover all three.
var Mutations = []Mutation{MutationIncreaseSize, MutationDecreaseTargetSize, MutationDeleteNodes}

// The mutation faults every provider must survive, as InjectMutationFault
// answers. Checks copy one and set Times.
var (
	FaultRateLimited  = fakecloud.Fault{Status: http.StatusTooManyRequests, RetryAfter: "1"}
	FaultServerError  = fakecloud.Fault{Status: http.StatusServiceUnavailable}
	FaultHang         = fakecloud.Fault{Hang: true}
	FaultMalformed    = fakecloud.Fault{Malformed: true}
	FaultAnswerLost   = fakecloud.Fault{AfterApply: true, Status: http.StatusBadGateway}
	FaultAppliedReset = fakecloud.Fault{AfterApply: true, Reset: true}
	// FaultAppliedEmptyBody is a gateway that passes the cloud's success
	// status on but drops its body: the change is made, the answer does
	// not say the resulting size.
	FaultAppliedEmptyBody = fakecloud.Fault{AfterApply: true, Status: http.StatusOK, Body: new(string)}
	// FaultRefused is a definite refusal: the cloud changed nothing.
	FaultRefused = fakecloud.Fault{Status: http.StatusBadRequest}
)

// MutationFaults names the faults above, for table-driven checks.
var MutationFaults = map[string]fakecloud.Fault{
	"429 with Retry-After":       FaultRateLimited,
	"503":                        FaultServerError,
	"hang past the deadline":     FaultHang,
	"malformed answer":           FaultMalformed,
	"applied, answer lost (502)": FaultAnswerLost,
	"applied, connection reset":  FaultAppliedReset,
	"applied, empty 2xx answer":  FaultAppliedEmptyBody,
	"400":                        FaultRefused,
}

// Harness builds environments for the kit.
type Harness struct {
	// NewEnv returns a fresh Env; the kit calls it once per check. Optional
	// when NewEnvWithOptions is set.
	NewEnv func(t *testing.T) *Env
	// NewEnvWithOptions is NewEnv with the provider built from opts, as main
	// builds it from its flags: the kit sets RateLimit
	// (--cloud-api-rate-limit) with RateLimitNow and RateLimitSleep, and
	// MaxStaleness (--max-staleness), and always Guard, a manual clock of
	// the check's own for the guards' quarantine; the harness adds what it
	// needs (user agent) and passes Guard on to the provider. With the zero
	// BuildOptions it must equal NewEnv. Optional; enables the rate-limit
	// and staleness checks, and the quarantine checks of a provider with
	// MutationGuards.
	NewEnvWithOptions func(t *testing.T, opts registry.BuildOptions) *Env
	// Serve serves p through the real externalgrpc server and returns a
	// client, as CA talks to it (grpctest.Serve; the kit cannot import the
	// server, whose tests import the kit). Optional; enables the checks of
	// the codes CA receives.
	Serve func(t testing.TB, p cloudprovider.CloudProvider) protos.CloudProviderClient
	// ServeConn is Serve returning the connection (grpctest.ServeConn), so
	// checks can also speak the CA 1.34.1 layout on it. Optional; enables
	// the gRPC part of the settings check.
	ServeConn func(t testing.TB, p cloudprovider.CloudProvider) grpc.ClientConnInterface
	// StartWithSpecs builds the provider as main does, with these --nodes
	// values instead of the harness's own, against a freshly seeded cloud
	// (the same ids as NewEnv's), and takes its first snapshot; it returns
	// the error of the construction or of that first Refresh, nil when both
	// succeed. Optional; enables the two-specs check.
	StartWithSpecs func(t *testing.T, specs []string) error
	// NotApplicable gives, for each optional hook of the harness or its Env
	// left nil or empty (Hooks), a true statement of why this cloud (or
	// this harness) has no such thing. A nil hook without a reason fails
	// the checks that need it, and HooksSetOrNotApplicable; a reason for a
	// hook that is set fails the latter.
	NotApplicable map[Hook]string
}

// MutationSelectors names, per Mutation, the requests a cloud's provider
// sends to carry it out; only the selector fields (Method, PathContains,
// Operation) of each Fault are used.
type MutationSelectors map[Mutation]fakecloud.Fault

// Injector returns an Env.InjectMutationFault that gives f the selector of its
// kind and queues it with add (a fake's AddFault).
func (m MutationSelectors) Injector(add func(fakecloud.Fault)) func(Mutation, fakecloud.Fault) {
	return func(kind Mutation, f fakecloud.Fault) {
		selector, ok := m[kind]
		if !ok {
			panic(fmt.Sprintf("cloudprovidertest: no selector for mutation %s", kind))
		}
		f.Method, f.PathContains, f.Operation = selector.Method, selector.PathContains, selector.Operation
		add(f)
	}
}

// newEnv builds an environment from NewEnvWithOptions, or from NewEnv when
// the check needs no options.
func (h Harness) newEnv(t *testing.T, opts registry.BuildOptions) *Env {
	t.Helper()
	if h.NewEnvWithOptions != nil {
		return h.NewEnvWithOptions(t, opts)
	}
	if h.NewEnv == nil {
		t.Fatal("Harness has neither NewEnv nor NewEnvWithOptions")
	}
	return h.NewEnv(t)
}
