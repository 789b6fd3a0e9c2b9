package exoscale

import (
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi"
)

func TestInstanceStatus(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		state   string
		want    cloudprovider.InstanceState
		errInfo bool
	}{
		{"", cloudprovider.InstanceCreating, false},
		{"starting", cloudprovider.InstanceCreating, false},
		{"running", cloudprovider.InstanceRunning, false},
		{"migrating", cloudprovider.InstanceRunning, false},
		{"stopping", cloudprovider.InstanceRunning, false},
		{"stopped", cloudprovider.InstanceRunning, false},
		{"destroying", cloudprovider.InstanceDeleting, false},
		{"expunging", cloudprovider.InstanceDeleting, false},
		{"destroyed", cloudprovider.InstanceDeleting, false},
		{"error", cloudprovider.InstanceCreating, true},
		{"hibernating-in-2030", cloudprovider.InstanceRunning, false},
	} {
		t.Run(tc.state, func(t *testing.T) {
			t.Parallel()
			s := instanceStatus(tc.state)
			if s == nil || s.State != tc.want || (s.ErrorInfo != nil) != tc.errInfo {
				t.Fatalf("instanceStatus(%q) = %+v, want state %v errorInfo %v", tc.state, s, tc.want, tc.errInfo)
			}
			if s.ErrorInfo != nil && (s.ErrorInfo.ErrorCode == "" || s.State == 0) {
				t.Fatalf("error info without code or state: %+v", s)
			}
			in := member("i-1", tc.state)
			if in.Id != ProviderIDPrefix+"i-1" || in.Status == nil || in.Status.State != tc.want {
				t.Fatalf("member(i-1, %q) = %+v, want providerID %si-1 in state %v", tc.state, in, ProviderIDPrefix, tc.want)
			}
		})
	}
}

func TestOperationErrorInfo(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		op        exoapi.Operation
		quota     bool
		wantClass cloudprovider.InstanceErrorClass
		wantCode  string
	}{
		{"quota", exoapi.Operation{State: "failure", Reason: "forbidden"}, true, cloudprovider.OutOfResourcesErrorClass, errorCodeQuota},
		{"unavailable", exoapi.Operation{State: "failure", Reason: "unavailable"}, false, cloudprovider.OutOfResourcesErrorClass, "exoscale-operation-unavailable"},
		{"partial", exoapi.Operation{State: "failure", Reason: "partial"}, false, cloudprovider.OutOfResourcesErrorClass, "exoscale-operation-partial"},
		{"fault", exoapi.Operation{State: "failure", Reason: "fault", Message: "boom"}, false, cloudprovider.OtherErrorClass, "exoscale-operation-fault"},
		{"timeout without reason", exoapi.Operation{State: "timeout"}, false, cloudprovider.OtherErrorClass, "exoscale-operation-timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			info := operationErrorInfo(tc.op, tc.quota)
			if info.ErrorClass != tc.wantClass || info.ErrorCode != tc.wantCode || info.ErrorMessage == "" {
				t.Fatalf("operationErrorInfo = %+v", info)
			}
		})
	}
}
