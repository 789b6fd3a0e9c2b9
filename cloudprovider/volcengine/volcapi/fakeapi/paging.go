package fakeapi

import (
	"maps"
	"slices"
	"strconv"
)

// The Auto Scaling and VPC lists page by number (PageNumber from 1, and
// PageSize); the ECS lists by token (MaxResults, and NextToken from the
// previous answer). Either way the Result carries TotalCount, the number of
// matches rather than the page's length (Auto Scaling and ECS API
// references, response parameters). The fake skews TotalCount by Options.TotalCountSkew on request, so clients that
// trust it can be caught.

// pager picks one page out of a list of matches.
type pager interface {
	// window returns the bounds of the page within n matches and the Result
	// fields that describe the page.
	window(n int) (lo, hi int, fields map[string]any)
}

// numberPage is PageNumber/PageSize paging.
type numberPage struct{ number, size int }

// numberPage reads PageNumber (from 1) and PageSize. PageSize defaults to 10
// and takes 1 to 100, the Volcengine reference's range (BytePlus documents
// at most 50, the client's page size).
func (r *params) numberPage() numberPage {
	p := numberPage{number: r.int("PageNumber", 1), size: r.int("PageSize", 10)}
	switch {
	case r.err != nil:
	case p.number < 1:
		r.fail(invalid("PageNumber must be at least 1"))
	case p.size < 1 || p.size > 100:
		r.fail(invalid("PageSize must be between 1 and 100"))
	}
	return p
}

func (p numberPage) window(n int) (lo, hi int, fields map[string]any) {
	lo = min((p.number-1)*p.size, n)
	hi = min(lo+p.size, n)
	return lo, hi, map[string]any{"PageNumber": p.number, "PageSize": p.size}
}

// tokenPage is MaxResults/NextToken paging. The fake's token is the offset
// of the page's first match; clients must treat it as opaque.
type tokenPage struct{ max, offset int }

// tokenPage reads MaxResults (def when absent) and NextToken. MaxResults
// takes 1 to 1000 (ECS reference, DescribeInstanceTypes).
func (r *params) tokenPage(def int) tokenPage {
	p := tokenPage{max: r.int("MaxResults", def)}
	if r.err != nil {
		return p
	}
	if p.max < 1 || p.max > 1000 {
		r.fail(invalid("MaxResults must be between 1 and 1000"))
		return p
	}
	if tok := r.str("NextToken"); tok != "" {
		off, err := strconv.Atoi(tok)
		if err != nil || off < 0 {
			r.fail(invalid("bad NextToken %q", tok))
		}
		p.offset = off
	}
	return p
}

func (p tokenPage) window(n int) (lo, hi int, fields map[string]any) {
	lo = min(p.offset, n)
	hi = min(lo+p.max, n)
	next := ""
	if hi < n {
		next = strconv.Itoa(hi)
	}
	return lo, hi, map[string]any{"NextToken": next}
}

// listResult is a Describe action's Result: the page of matched that p picks,
// each rendered, under key, with TotalCount (skewed by skew) and p's fields.
func listResult[T any](p pager, skew int, key string, matched []T, render func(T) map[string]any) map[string]any {
	lo, hi, result := p.window(len(matched))
	page := make([]map[string]any, 0, hi-lo)
	for _, m := range matched[lo:hi] {
		page = append(page, render(m))
	}
	result[key] = page
	result["TotalCount"] = len(matched) + skew
	return result
}

// matching returns the items keep accepts, in order.
func matching[T any](items []T, keep func(T) bool) []T {
	var out []T
	for _, it := range items {
		if keep(it) {
			out = append(out, it)
		}
	}
	return out
}

// byID returns the values of a store keyed by id, in id order: the order the
// fake lists resources in.
func byID[T any](store map[string]T) []T {
	out := make([]T, 0, len(store))
	for _, id := range slices.Sorted(maps.Keys(store)) {
		out = append(out, store[id])
	}
	return out
}
