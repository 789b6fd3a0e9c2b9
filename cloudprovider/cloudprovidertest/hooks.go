package cloudprovidertest

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
)

// Hook names an optional hook of Harness or Env (its field, as written in
// Go), as Harness.NotApplicable keys it.
type Hook string

// The optional hooks. Each one a harness leaves nil (or, for the group
// lists, empty) needs its reason in Harness.NotApplicable; the checks that
// need it then skip with "not applicable: " and that reason.
const (
	HookNewEnvWithOptions     Hook = "Harness.NewEnvWithOptions"
	HookServe                 Hook = "Harness.Serve"
	HookServeConn             Hook = "Harness.ServeConn"
	HookStartWithSpecs        Hook = "Harness.StartWithSpecs"
	HookSettle                Hook = "Env.Settle"
	HookFailNextCalls         Hook = "Env.FailNextCalls"
	HookInjectMutationFault   Hook = "Env.InjectMutationFault"
	HookClearFaults           Hook = "Env.ClearFaults"
	HookAddUnseenInstance     Hook = "Env.AddUnseenInstance"
	HookAddFailedInstance     Hook = "Env.AddFailedInstance"
	HookFailNextScaleUp       Hook = "Env.FailNextScaleUp"
	HookListScaleUpLate       Hook = "Env.ListScaleUpLate"
	HookHoldRemoval           Hook = "Env.HoldRemoval"
	HookInjectListingFault    Hook = "Env.InjectListingFault"
	HookFailEnrichmentLookups Hook = "Env.FailEnrichmentLookups"
	HookReportMutationFailed  Hook = "Env.ReportMutationFailed"
	HookRefuseForQuota        Hook = "Env.RefuseForQuota"
	HookClock                 Hook = "Env.Clock"
	HookBudget                Hook = "Env.Budget"
	HookChangeUnseen          Hook = "Env.ChangeUnseen"
	HookSpecNames             Hook = "Env.SpecNames"
	HookTemplateGroups        Hook = "Env.TemplateGroups"
	HookOptionsGroups         Hook = "Env.OptionsGroups"
	HookPermissions           Hook = "Env.Permissions"
	// HookCallerDeadline is the caller's context reaching the provider:
	// every call of the kit carries a deadline, as CA's externalgrpc client
	// sends one, and some checks are about what the provider does with it
	// (gives up a call the cloud holds, refuses a wait for the rate limit
	// that would pass it). It has no field: it holds unless NotApplicable
	// says why the harness's provider makes its own deadlines (the in-tree
	// adapter: upstream's interface takes no context).
	HookCallerDeadline Hook = "Harness.CallerDeadline"
)

// Hooks lists every optional hook.
var Hooks = []Hook{
	HookNewEnvWithOptions, HookServe, HookServeConn, HookStartWithSpecs,
	HookSettle, HookFailNextCalls, HookInjectMutationFault, HookClearFaults,
	HookAddUnseenInstance, HookAddFailedInstance, HookFailNextScaleUp, HookListScaleUpLate,
	HookHoldRemoval, HookInjectListingFault,
	HookFailEnrichmentLookups, HookReportMutationFailed, HookRefuseForQuota,
	HookClock, HookBudget, HookChangeUnseen, HookSpecNames,
	HookTemplateGroups, HookOptionsGroups, HookPermissions, HookCallerDeadline,
}

// hookSet reports whether hook is set in h or env (nil when only Harness
// hooks are asked about).
func hookSet(h Harness, env *Env, hook Hook) bool {
	switch hook {
	case HookNewEnvWithOptions:
		return h.NewEnvWithOptions != nil
	case HookServe:
		return h.Serve != nil
	case HookServeConn:
		return h.ServeConn != nil
	case HookStartWithSpecs:
		return h.StartWithSpecs != nil
	case HookSettle:
		return env.Settle != nil
	case HookFailNextCalls:
		return env.FailNextCalls != nil
	case HookInjectMutationFault:
		return env.InjectMutationFault != nil
	case HookClearFaults:
		return env.ClearFaults != nil
	case HookAddUnseenInstance:
		return env.AddUnseenInstance != nil
	case HookAddFailedInstance:
		return env.AddFailedInstance != nil
	case HookFailNextScaleUp:
		return env.FailNextScaleUp != nil
	case HookListScaleUpLate:
		return env.ListScaleUpLate != nil
	case HookHoldRemoval:
		return env.HoldRemoval != nil
	case HookInjectListingFault:
		return env.InjectListingFault != nil
	case HookFailEnrichmentLookups:
		return env.FailEnrichmentLookups != nil
	case HookReportMutationFailed:
		return env.ReportMutationFailed != nil
	case HookRefuseForQuota:
		return env.RefuseForQuota != nil
	case HookClock:
		return env.Clock != nil
	case HookBudget:
		return env.Budget != nil
	case HookChangeUnseen:
		return env.ChangeUnseen != nil
	case HookSpecNames:
		return env.SpecNames != nil
	case HookTemplateGroups:
		return len(env.TemplateGroups) > 0
	case HookOptionsGroups:
		return len(env.OptionsGroups) > 0
	case HookPermissions:
		return env.Permissions != nil
	case HookCallerDeadline:
		return h.NotApplicable[HookCallerDeadline] == ""
	}
	panic("cloudprovidertest: unknown hook " + string(hook))
}

// hookPresent is the one rule for an optional hook: set, it returns true;
// nil with a reason in h.NotApplicable, it returns the reason; nil without
// one, it fails the test, naming the hook.
func hookPresent(t testing.TB, h Harness, env *Env, hook Hook) (bool, string) {
	t.Helper()
	if hookSet(h, env, hook) {
		return true, ""
	}
	state := "is nil"
	switch hook {
	case HookTemplateGroups, HookOptionsGroups:
		state = "declares no group"
	case HookCallerDeadline:
		state = "does not reach the provider"
	}
	if why := h.NotApplicable[hook]; why != "" {
		return false, "not applicable: " + string(hook) + " " + state + ": " + why
	}
	t.Fatalf("%s %s and Harness.NotApplicable gives no reason: set it, or state in Harness.NotApplicable[%q] why this cloud has no such thing", hook, state, hook)
	return false, ""
}

// WithOptionsGroup stores one option override on the group through
// env.SetGroupSettings, as a user tuning the group would, and declares the
// group in env.OptionsGroups, so the options check has a group whose
// options it checks. It returns env.
func WithOptionsGroup(env *Env, groupID string) *Env {
	env.SetGroupSettings(groupID, SettingsSeed{Options: map[string]string{groupconfig.OptionScaleDownUnneededTime: "12m"}})
	env.OptionsGroups = append(env.OptionsGroups, groupID)
	return env
}

// requireHooks skips the check, with every missing hook's reason, unless
// all of hooks are set; a missing hook without a reason fails it.
func requireHooks(t testing.TB, h Harness, env *Env, hooks ...Hook) {
	t.Helper()
	var reasons []string
	for _, hook := range hooks {
		if ok, why := hookPresent(t, h, env, hook); !ok {
			reasons = append(reasons, why)
		}
	}
	if len(reasons) > 0 {
		t.Skip(strings.Join(reasons, "; "))
	}
}

// requireCallerDeadline skips a check whose subject, what, is what the
// provider does with its caller's deadline, when the harness's provider
// does not receive it (HookCallerDeadline), with both reasons.
func requireCallerDeadline(t testing.TB, h Harness, what string) {
	t.Helper()
	if ok, why := hookPresent(t, h, nil, HookCallerDeadline); !ok {
		t.Skip(why + "; " + what)
	}
}

// require is requireHooks for the kit's harness and environment.
func (k *kit) require(hooks ...Hook) {
	k.t.Helper()
	requireHooks(k.t, k.h, k.env, hooks...)
}

// optional reports whether hook is set; a nil hook with its reason is
// logged (the part of the check that needs it is not applicable), one
// without fails the check.
func (k *kit) optional(hook Hook) bool {
	k.t.Helper()
	ok, why := hookPresent(k.t, k.h, k.env, hook)
	if !ok {
		k.t.Log(why)
	}
	return ok
}

// checkHooksAccounted: every optional hook is set or carries its reason, and
// no reason is given for a hook that is set (a stale reason would misstate
// the cloud).
func checkHooksAccounted(t *testing.T, k *kit) {
	var missing, stale []string
	for _, hook := range Hooks {
		set, why := hookSet(k.h, k.env, hook), k.h.NotApplicable[hook]
		switch {
		case !set && why == "":
			missing = append(missing, string(hook))
		case set && why != "":
			stale = append(stale, string(hook))
		}
	}
	for hook := range k.h.NotApplicable {
		if !knownHook(hook) {
			t.Errorf("Harness.NotApplicable names %q, which is no hook of the kit", hook)
		}
	}
	sort.Strings(missing)
	sort.Strings(stale)
	if len(missing) > 0 {
		t.Errorf("hooks nil without a reason: %v; set each, or state in Harness.NotApplicable why this cloud has no such thing", missing)
	}
	if len(stale) > 0 {
		t.Errorf("Harness.NotApplicable gives a reason for hooks that are set: %v; drop the reason", stale)
	}
}

func knownHook(hook Hook) bool { return slices.Contains(Hooks, hook) }
