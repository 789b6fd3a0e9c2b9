package main

import (
	"os"
	"slices"
	"strings"
	"testing"

	exofake "github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/exoscale/exoapi/fakeapi"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/fakecloud"
	volcfake "github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/volcengine/volcapi/fakeapi"
)

// TestDocsPermissionsMatchPolicy: the Exoscale and Volcengine pages'
// Permissions tables name exactly the actions their example policies allow
// (the client tests keep each policy equal to what the client calls) and
// link the policy; every provider page has the anchor preflight names.
func TestDocsPermissionsMatchPolicy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		provider, policy string
		parse            func([]byte) (*fakecloud.Permissions, error)
	}{
		{"exoscale", "examples/exoscale/iam-role-policy.json", exofake.ParseRolePolicy},
		{"volcengine", "examples/volcengine/iam-policy.json", volcfake.ParsePolicy},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(tc.policy)
			if err != nil {
				t.Fatal(err)
			}
			policy, err := tc.parse(data)
			if err != nil {
				t.Fatal(err)
			}
			page := strings.TrimSuffix(permissionsPage(tc.provider), "#permissions")
			sec := section(t, readDoc(t, page), "## Permissions")
			if !strings.Contains(sec, "](../../"+tc.policy+")") {
				t.Errorf("%s#permissions does not link %s", page, tc.policy)
			}
			var listed []string
			for _, tab := range tables(sec) {
				for _, row := range tab.rows {
					listed = append(listed, codeSpans(row[0])...)
				}
			}
			slices.Sort(listed)
			if granted := policy.Granted(); !slices.Equal(listed, granted) {
				t.Errorf("%s#permissions lists %q\n%s allows %q", page, listed, tc.policy, granted)
			}
		})
	}
	// Vultr has no policy file; its page still needs the anchor preflight names.
	section(t, readDoc(t, strings.TrimSuffix(permissionsPage("vultr"), "#permissions")), "## Permissions")
}
