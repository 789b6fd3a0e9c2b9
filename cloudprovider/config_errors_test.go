package cloudprovider

import (
	"errors"
	"fmt"
	"testing"
)

func TestConfigProblems(t *testing.T) {
	if err := ConfigProblems("vultr", nil, errors.Join(nil)); err != nil {
		t.Fatalf("no problem gives %v, want nil", err)
	}
	inner := errors.Join(errors.New("a is not set"), Errorf(ErrInvalidArgument, "bad spec"))
	err := ConfigProblems("vultr", fmt.Errorf("wrapped: %w", errors.New("x")), inner, errors.New("vultr: already named"))
	want := "vultr: wrapped: x\nvultr: a is not set\nvultr: bad spec\nvultr: already named"
	if err == nil || err.Error() != want {
		t.Fatalf("got %q, want %q", err, want)
	}
	if !errors.Is(err, ErrInvalidArgument) {
		t.Error("a wrapped sentinel is lost")
	}
}

func TestMissingCredential(t *testing.T) {
	got := MissingCredential("EXOSCALE_API_KEY", "EXOSCALE_API_KEY_FILE").Error()
	if want := "EXOSCALE_API_KEY is not set: set it, or EXOSCALE_API_KEY_FILE to a file holding it"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
