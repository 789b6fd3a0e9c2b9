package cloudprovider

import (
	"errors"
	"fmt"
	"strings"
)

// ConfigProblems reports a provider's configuration problems one per line,
// each starting with the provider's name, so an operator reading the one
// folded line main prints sees every cause on its own and which provider
// refused it. Joined errors inside errs are flattened, nil ones dropped;
// errors.Is still reaches every wrapped sentinel. It returns nil when there
// is no problem.
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
		if strings.HasPrefix(err.Error(), provider+": ") {
			out[i] = err
			continue
		}
		out[i] = fmt.Errorf("%s: %w", provider, err)
	}
	return errors.Join(out...)
}

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

// MissingCredential says a credential is unset and names every way to give
// it: the variable or key itself and the file alternative (a mounted Secret),
// so an operator who mounted a file but misspelt its variable sees the name
// the provider reads.
func MissingCredential(name, fileAlternative string) error {
	return fmt.Errorf("%s is not set: set it, or %s to a file holding it", name, fileAlternative)
}
