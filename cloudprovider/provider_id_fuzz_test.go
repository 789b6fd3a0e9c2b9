package cloudprovider

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParseProviderID checks that an accepted providerID is exactly prefix +
// id with an id that cannot smuggle a path, and that rejections are typed.
func FuzzParseProviderID(f *testing.F) {
	for _, s := range []string{"vultr://abc", "vultr://", "vultr:///x", "exoscale://pending/g/failed-1", "volcengine://i-123 ", "aws:///us-east-1a/i-1", "", "vultr://a\nb"} {
		f.Add("vultr://", s)
	}
	f.Add("exoscale://", "exoscale://00000006-0000-4000-8000-000000000005")
	f.Fuzz(func(t *testing.T, prefix, providerID string) {
		id, err := ParseProviderID(prefix, providerID)
		if err != nil {
			if !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("rejection is not ErrInvalidArgument: %v", err)
			}
			return
		}
		if id == "" || strings.ContainsAny(id, "/ \t\n") {
			t.Fatalf("accepted id %q from %q", id, providerID)
		}
		if BuildProviderID(prefix, id) != providerID {
			t.Fatalf("%q parsed to %q, which builds %q", providerID, id, BuildProviderID(prefix, id))
		}
	})
}
