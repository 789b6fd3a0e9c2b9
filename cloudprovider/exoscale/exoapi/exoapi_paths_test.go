package exoapi

import (
	"net/http/httptest"
	"testing"
)

func TestOperationName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ method, path, want string }{
		{"GET", "/v2/sks-cluster", "GET /v2/sks-cluster"},
		{"GET", "/v2/instance-pool/4f1c-aa", "GET /v2/instance-pool/{id}"},
		{"PUT", "/v2/instance-pool/4f1c-aa:scale", "PUT /v2/instance-pool/{id}:scale"},
		{"PUT", "/v2/sks-cluster/c1/nodepool/n1:evict", "PUT /v2/sks-cluster/{id}/nodepool/{id}:evict"},
		{"PUT", "/v2/sks-cluster/c1/nodepool/n1:rotate-ccm", "PUT /v2/sks-cluster/{id}/nodepool/{id}:{action}"},
		{"GET", "/v2/quota/instance", "GET /v2/quota/instance"},
		{"GET", "/v2/quota/sks-cluster", "GET /v2/quota/sks-cluster"},
		{"GET", "/v2/operation/0000-1", "GET /v2/operation/{id}"},
		{"GET", "/prefix/v2/instance", "GET /{id}/v2/instance"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest(tc.method, "http://x"+tc.path+"?manager-type=instance-pool", nil)
			if got := OperationName(req); got != tc.want {
				t.Fatalf("OperationName = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestTemplatePathAction(t *testing.T) {
	t.Parallel()
	for path, want := range map[string]string{
		"/v2/instance-pool/x:scale":            "scale",
		"/v2/sks-cluster/c/nodepool/n:evict":   "evict",
		"/v2/instance-pool/x":                  "",
		"/v2/instance:odd/instance-pool/plain": "",
	} {
		if got := TemplatePathAction(path); got != want {
			t.Errorf("TemplatePathAction(%q) = %q, want %q", path, got, want)
		}
	}
}

func TestIAMOperation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ method, path, want string }{
		{"GET", "/v2/instance-pool/4f1c-aa", "get-instance-pool"},
		{"GET", "/v2/instance-pool", "list-instance-pools"},
		{"PUT", "/v2/sks-cluster/c1/nodepool/n1:evict", "evict-sks-nodepool-members"},
		{"GET", "/v2/quota/instance", "get-quota"},
		{"GET", "/v2/quota/sks-cluster", "get-quota"},
		{"GET", "/v2/quota", "list-quotas"},
		{"PUT", "/v2/sks-cluster/c1/nodepool/n1:rotate-ccm", ""},
		{"DELETE", "/v2/instance-pool/4f1c-aa", ""},
	} {
		req := httptest.NewRequest(tc.method, "http://x"+tc.path, nil)
		if got := IAMOperation(OperationName(req)); got != tc.want {
			t.Errorf("IAMOperation(%s %s) = %q, want %q", tc.method, tc.path, got, tc.want)
		}
	}
}
