package groupstate

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
)

func TestCheckIncrease(t *testing.T) {
	cases := []struct {
		delta, target, max int
		want               error
	}{
		{1, 3, 5, nil},
		{2, 3, 5, nil},
		{3, 3, 5, cloudprovider.ErrFailedPrecondition},
		{0, 3, 5, cloudprovider.ErrInvalidArgument},
		{-1, 3, 5, cloudprovider.ErrInvalidArgument},
	}
	for _, tc := range cases {
		err := CheckIncrease("g", tc.delta, tc.target, tc.max)
		if (tc.want == nil) != (err == nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
			t.Errorf("CheckIncrease(%d, %d, %d) = %v, want %v", tc.delta, tc.target, tc.max, err, tc.want)
		}
	}
}

func TestCheckDecrease(t *testing.T) {
	cases := []struct {
		delta, target, existing int
		want                    error
	}{
		{-1, 5, 4, nil},
		{-2, 5, 3, nil},
		{-2, 5, 4, cloudprovider.ErrFailedPrecondition},
		{0, 5, 4, cloudprovider.ErrInvalidArgument},
		{1, 5, 4, cloudprovider.ErrInvalidArgument},
	}
	for _, tc := range cases {
		err := CheckDecrease("g", tc.delta, tc.target, tc.existing)
		if (tc.want == nil) != (err == nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
			t.Errorf("CheckDecrease(%d, %d, %d) = %v, want %v", tc.delta, tc.target, tc.existing, err, tc.want)
		}
	}
}

func TestCheckCancel(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name                       string
		delta, target, live, named int
		want                       error
	}{
		{"one unlisted, nothing named", -1, 4, 3, 0, cloudprovider.ErrFailedPrecondition},
		{"failed slot named", -1, 4, 3, 1, nil},
		{"more than the named slots", -2, 5, 3, 1, cloudprovider.ErrFailedPrecondition},
		{"all listed", -1, 3, 3, 0, cloudprovider.ErrFailedPrecondition},
		{"below the listed", -2, 4, 3, 1, cloudprovider.ErrFailedPrecondition},
		{"not a decrease", 1, 4, 3, 1, cloudprovider.ErrInvalidArgument},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := CheckCancel("g", tc.delta, tc.target, tc.live, tc.named)
			if (tc.want == nil) != (err == nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Fatalf("CheckCancel(%d, %d, %d, %d) = %v, want %v", tc.delta, tc.target, tc.live, tc.named, err, tc.want)
			}
		})
	}
}

func node(name string, fake bool) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if fake {
		n.Annotations = map[string]string{cloudprovider.FakeNodeReasonAnnotation: "unregistered"}
	}
	return n
}

func TestCheckDeleteMin(t *testing.T) {
	reg, unreg := node("r", false), node("u", true)
	cases := []struct {
		name        string
		target, min int
		nodes       []*corev1.Node
		ok          bool
	}{
		{"registered above min", 3, 2, []*corev1.Node{reg}, true},
		{"registered at min", 2, 2, []*corev1.Node{reg}, false},
		{"unregistered at min", 2, 2, []*corev1.Node{unreg}, true},
		{"unregistered to zero", 1, 1, []*corev1.Node{unreg}, true},
		{"mixed below min", 3, 2, []*corev1.Node{reg, unreg}, false},
		{"mixed at min", 4, 2, []*corev1.Node{reg, unreg}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := checkDeleteMin("g", tc.target, tc.min, tc.nodes)
			if tc.ok != (err == nil) || (err != nil && !errors.Is(err, cloudprovider.ErrFailedPrecondition)) {
				t.Fatalf("CheckDeleteMin = %v, ok want %v", err, tc.ok)
			}
		})
	}
	if isRegistered(nil) {
		t.Fatal("a nil node is not registered")
	}
}
