package vultr

import (
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

func TestInstanceStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status  string
		want    cloudprovider.InstanceState
		errCode string
	}{
		{"active", cloudprovider.InstanceRunning, ""},
		{"Active", cloudprovider.InstanceRunning, ""},
		{"upgrading", cloudprovider.InstanceRunning, ""},
		{"pending", cloudprovider.InstanceCreating, ""},
		{"unknown", cloudprovider.InstanceCreating, ""},
		{"", cloudprovider.InstanceCreating, ""},
		{"rebuilding", cloudprovider.InstanceCreating, ""},
		{"closed", cloudprovider.InstanceDeleting, ""},
		// Running without error info: CA reads error info only on
		// instances being created.
		{"suspended", cloudprovider.InstanceRunning, ""},
	}
	for _, tc := range tests {
		t.Run(tc.status, func(t *testing.T) {
			t.Parallel()
			st := instanceStatus(tc.status)
			if st == nil || st.State != tc.want {
				t.Fatalf("status %q -> %+v, want %v", tc.status, st, tc.want)
			}
			code := ""
			if st.ErrorInfo != nil {
				if st.State != cloudprovider.InstanceCreating {
					t.Fatalf("status %q -> %v with error info %+v; error info goes only with creating", tc.status, st.State, st.ErrorInfo)
				}
				code = st.ErrorInfo.ErrorCode
				if st.ErrorInfo.ErrorClass != cloudprovider.OtherErrorClass || st.ErrorInfo.ErrorMessage == "" {
					t.Fatalf("error info %+v", st.ErrorInfo)
				}
			}
			if code != tc.errCode {
				t.Fatalf("error code %q, want %q", code, tc.errCode)
			}
		})
	}
}
