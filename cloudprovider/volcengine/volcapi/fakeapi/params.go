package fakeapi

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// params reads one request's parameters the way the API checks them. The
// first refusal sticks and later reads return their defaults, so a handler
// reads everything its action takes, in the order the fake refuses it, and
// checks err once before acting.
type params struct {
	q   url.Values
	err *apiError
}

// fail records aerr unless an earlier refusal stands.
func (r *params) fail(aerr *apiError) {
	if r.err == nil {
		r.err = aerr
	}
}

// str reads an optional value ("" when absent).
func (r *params) str(name string) string {
	return r.q.Get(name)
}

// required reads a value the action cannot do without; its absence is the
// common MissingParameter.<name>.
func (r *params) required(name string) string {
	v := r.q.Get(name)
	if v == "" {
		r.fail(errf(http.StatusBadRequest, codeMissingParameter+"."+name, "%s is required", name))
	}
	return v
}

func (r *params) int(name string, def int) int {
	return parse(r, name, def, strconv.Atoi, "an integer")
}

func (r *params) bool(name string, def bool) bool {
	return parse(r, name, def, strconv.ParseBool, "a boolean")
}

// parse reads an optional value of a type conv parses, def when absent.
func parse[T any](r *params, name string, def T, conv func(string) (T, error), kind string) T {
	v := r.q.Get(name)
	if r.err != nil || v == "" {
		return def
	}
	x, err := conv(v)
	if err != nil {
		r.fail(invalid("%s %q is not %s", name, v, kind))
	}
	return x
}

// list reads Name.1, Name.2, ... in order, up to the first missing index,
// skipping empty values.
func (r *params) list(name string) []string {
	var out []string
	for i := 1; ; i++ {
		v, ok := r.q[fmt.Sprintf("%s.%d", name, i)]
		if !ok {
			return out
		}
		if len(v) > 0 && v[0] != "" {
			out = append(out, v[0])
		}
	}
}

// ids reads the list Name.N that the action takes 1 to limit values of.
func (r *params) ids(name string, limit int) []string {
	ids := r.list(name)
	if len(ids) < 1 || len(ids) > limit {
		r.fail(idCount(name, limit, len(ids)))
	}
	return ids
}

// filter reads the optional list filter Name.N, which the action takes 1 to
// limit values of, as a match.
func (r *params) filter(name string, limit int) func(string) bool {
	ids := r.list(name)
	if len(ids) > limit {
		r.fail(idCount(name, limit, len(ids)))
	}
	return matchAny(ids)
}

func idCount(name string, limit, got int) *apiError {
	return invalid("%s.N takes 1 to %d values, got %d", name, limit, got)
}

// equal reads the single-value filter name as a match.
func (r *params) equal(name string) func(string) bool {
	if v := r.q.Get(name); v != "" {
		return matchAny([]string{v})
	}
	return matchAny(nil)
}

// matchAny matches every value when values is empty (the API's "no
// filter"), else only the listed ones.
func matchAny(values []string) func(string) bool {
	set := make(map[string]bool, len(values))
	for _, v := range values {
		set[v] = true
	}
	return func(v string) bool { return len(set) == 0 || set[v] }
}
