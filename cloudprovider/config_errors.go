package cloudprovider

import (
	"errors"
	"fmt"
	"strings"
)

// ConfigProblems joins a provider's configuration problems, one per line,
// each starting with the provider's name. Joined errors inside errs are
// flattened and nil ones dropped; errors.Is still reaches every wrapped
// sentinel. It returns nil when there is no problem.
func ConfigProblems(provider string, errs ...error) error {
	var flat []error
	for _, err := range errs {
		flat = append(flat, flatten(err)...)
	}
	if len(flat) == 0 {
		return nil
	}
	out := make([]error, len(flat))
	for i, err := range flat {
		line := WithoutClass(err)
		if !strings.HasPrefix(line.Error(), provider+": ") {
			line = fmt.Errorf("%s: %w", provider, line)
		}
		out[i] = line
	}
	return errors.Join(out...)
}

// classes are the sentinels WithoutClass cuts from a message. The class is
// for errors.Is (exit codes, gRPC codes); the operator reads cause and fix.
func classes() []error {
	return []error{ErrNotImplemented, ErrNodeGroupNotFound, ErrInvalidArgument, ErrFailedPrecondition,
		ErrNotFound, ErrRateLimited, ErrUnauthenticated, ErrPermissionDenied, ErrQuotaExceeded, ErrUnavailable,
		ErrMalformedResponse, ErrConfig}
}

// WithoutClass is err with a trailing ": <class>" (as Errorf writes it)
// cut from its text; errors.Is and errors.As still reach everything err
// wraps.
func WithoutClass(err error) error {
	text := err.Error()
	for _, class := range classes() {
		if cut, ok := strings.CutSuffix(text, ": "+class.Error()); ok && errors.Is(err, class) {
			return classless{text: cut, err: err}
		}
	}
	return err
}

// classless is an error shown with another text.
type classless struct {
	text string
	err  error
}

func (c classless) Error() string { return c.text }
func (c classless) Unwrap() error { return c.err }

// flatten lists the leaves of errors.Join trees (and of wrappers around one).
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}

// MissingCredential says a credential is unset and names both ways to give
// it: the variable or key itself, and the file alternative (a mounted Secret).
func MissingCredential(name, fileAlternative string) error {
	return fmt.Errorf("%s is not set: set it, or %s to a file holding it", name, fileAlternative)
}
