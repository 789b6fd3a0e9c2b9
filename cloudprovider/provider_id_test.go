package cloudprovider

import (
	"errors"
	"testing"
)

func TestParseProviderID(t *testing.T) {
	cases := []struct {
		in, want string
		ok       bool
	}{
		{"vultr://abc-123", "abc-123", true},
		{"vultr://", "", false},
		{"aws:///i-1", "", false},
		{"vultr://a/b", "", false},
		{"", "", false},
	}
	for _, tc := range cases {
		got, err := ParseProviderID("vultr://", tc.in)
		if tc.ok != (err == nil) || got != tc.want {
			t.Errorf("ParseProviderID(%q) = %q, %v", tc.in, got, err)
		}
		if err != nil && !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("ParseProviderID(%q) error does not wrap ErrInvalidArgument", tc.in)
		}
	}
	if BuildProviderID("vultr://", "x") != "vultr://x" {
		t.Fatal("BuildProviderID")
	}
}

func TestNodeName(t *testing.T) {
	if NodeName("n1", "p://1") != "n1 (p://1)" || NodeName("p://1", "p://1") != "p://1" || NodeName("", "p://1") != "p://1" {
		t.Fatal("NodeName")
	}
}
