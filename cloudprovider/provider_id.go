package cloudprovider

import (
	"fmt"
	"strings"
)

// BuildProviderID returns prefix + id, e.g. "vultr://" + "abc".
func BuildProviderID(prefix, id string) string { return prefix + id }

// ParseProviderID strips prefix from providerID and returns the instance id.
// It fails on a wrong prefix or an empty id, so a node of another cloud is
// never taken for one of ours.
func ParseProviderID(prefix, providerID string) (string, error) {
	if !strings.HasPrefix(providerID, prefix) {
		return "", Errorf(ErrInvalidArgument, "providerID %q does not start with %q", providerID, prefix)
	}
	id := strings.TrimPrefix(providerID, prefix)
	if id == "" || strings.ContainsAny(id, "/ \t\n") {
		return "", Errorf(ErrInvalidArgument, "providerID %q has no valid instance id after %q", providerID, prefix)
	}
	return id, nil
}

// FakeNodeReasonAnnotation marks the fake nodes CA builds for instances that
// never registered ("unregistered") or failed to create ("create-error").
const FakeNodeReasonAnnotation = "k8s.io/cluster-autoscaler/fake-node-reason"

// NodeName returns a printable name for error messages.
func NodeName(name, providerID string) string {
	if name == "" || name == providerID {
		return providerID
	}
	return fmt.Sprintf("%s (%s)", name, providerID)
}
