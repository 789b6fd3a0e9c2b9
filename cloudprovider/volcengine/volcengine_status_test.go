package volcengine

import (
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

func TestInstanceStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status    string
		failure   string
		wantState cloudprovider.InstanceState
		wantNil   bool
		wantClass cloudprovider.InstanceErrorClass
		wantCode  string
	}{
		{status: asStatusInit, wantState: cloudprovider.InstanceCreating},
		{status: asStatusPending, wantState: cloudprovider.InstanceCreating},
		{status: asStatusPendingWait, wantState: cloudprovider.InstanceCreating},
		{status: asStatusInService, wantState: cloudprovider.InstanceRunning},
		{status: asStatusProtected, wantState: cloudprovider.InstanceRunning},
		{status: asStatusStandby, wantState: cloudprovider.InstanceRunning},
		{status: asStatusStopped, wantState: cloudprovider.InstanceRunning},
		{status: asStatusRemoving, wantState: cloudprovider.InstanceDeleting},
		{status: asStatusRemoveWait, wantState: cloudprovider.InstanceDeleting},
		{status: asStatusError, failure: "InsufficientInstanceStock: sold out", wantState: cloudprovider.InstanceCreating, wantClass: cloudprovider.OutOfResourcesErrorClass, wantCode: "InsufficientInstanceStock"},
		{status: asStatusError, failure: "The vCPU quota of the account is exceeded", wantState: cloudprovider.InstanceCreating, wantClass: cloudprovider.OutOfResourcesErrorClass, wantCode: errorCodeCreationFailed},
		{status: asStatusError, failure: "InvalidImageId.NotFound: image deleted", wantState: cloudprovider.InstanceCreating, wantClass: cloudprovider.OtherErrorClass, wantCode: "InvalidImageId.NotFound"},
		{status: asStatusError, wantState: cloudprovider.InstanceCreating, wantClass: cloudprovider.OtherErrorClass, wantCode: errorCodeCreationFailed},
		{status: "SomethingNew", wantNil: true},
	}
	for _, tc := range tests {
		t.Run(tc.status+"/"+tc.failure, func(t *testing.T) {
			t.Parallel()
			st := instanceStatus(tc.status, tc.failure)
			if tc.wantNil {
				if st != nil {
					t.Fatalf("status = %+v, want nil", st)
				}
				return
			}
			if st == nil || st.State != tc.wantState {
				t.Fatalf("status = %+v, want state %v", st, tc.wantState)
			}
			if tc.wantCode == "" {
				if st.ErrorInfo != nil {
					t.Fatalf("unexpected error info %+v", st.ErrorInfo)
				}
				return
			}
			if st.ErrorInfo == nil || st.ErrorInfo.ErrorClass != tc.wantClass || st.ErrorInfo.ErrorCode != tc.wantCode || st.ErrorInfo.ErrorMessage == "" {
				t.Fatalf("error info = %+v", st.ErrorInfo)
			}
		})
	}
}

func TestIsLive(t *testing.T) {
	t.Parallel()
	for status, want := range map[string]bool{asStatusInService: true, asStatusPending: true, asStatusError: true, asStatusRemoving: false, asStatusRemoveWait: false} {
		if got := isLive(status); got != want {
			t.Errorf("isLive(%s) = %v, want %v", status, got, want)
		}
	}
}
