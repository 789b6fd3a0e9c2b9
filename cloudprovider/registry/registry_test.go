package registry

import (
	"context"
	"reflect"
	"testing"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

func TestRegistry(t *testing.T) {
	build := func(context.Context, BuildOptions) (cloudprovider.CloudProvider, error) { return nil, nil }
	RegisterCloudProvider("zz-test-b", Registration{Build: build})
	RegisterCloudProvider("zz-test-a", Registration{Build: build})
	names := CloudProviders()
	var ours []string
	for _, n := range names {
		if n == "zz-test-a" || n == "zz-test-b" {
			ours = append(ours, n)
		}
	}
	if !reflect.DeepEqual(ours, []string{"zz-test-a", "zz-test-b"}) {
		t.Fatalf("CloudProviders() = %v, want sorted", names)
	}
	if _, ok := Lookup("zz-test-a"); !ok {
		t.Fatal("Lookup of a registered provider failed")
	}
	if _, ok := Lookup("nope"); ok {
		t.Fatal("Lookup of an unknown provider succeeded")
	}
	for name, reg := range map[string]Registration{"zz-test-a": {Build: build}, "": {Build: build}, "zz-test-c": {}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("RegisterCloudProvider(%q) did not panic", name)
				}
			}()
			RegisterCloudProvider(name, reg)
		}()
	}
}
