package fakeapi

import (
	"net/url"
	"reflect"
	"testing"
)

// pageCase is one request's paging parameters over n matches, and the page
// and Result fields it must answer (or the refusal).
type pageCase struct {
	name     string
	q        url.Values
	n        int
	wantErr  string
	wantPage []int
	want     map[string]any
}

func TestNumberPage(t *testing.T) {
	t.Parallel()
	size := func(n int) map[string]any { return map[string]any{"PageSize": n} }
	checkPaging(t, func(r *params) pager { return r.numberPage() }, []pageCase{
		{name: "defaults", q: url.Values{}, n: 25, wantPage: seq(0, 10), want: size(10)},
		{name: "last partial page", q: url.Values{"PageNumber": {"3"}, "PageSize": {"10"}}, n: 25, wantPage: seq(20, 25), want: map[string]any{"PageNumber": 3, "PageSize": 10}},
		{name: "beyond the end", q: url.Values{"PageNumber": {"9"}, "PageSize": {"10"}}, n: 25, wantPage: []int{}, want: size(10)},
		{name: "largest size", q: url.Values{"PageSize": {"100"}}, n: 25, wantPage: seq(0, 25), want: size(100)},
		{name: "page 0", q: url.Values{"PageNumber": {"0"}}, wantErr: "PageNumber must be at least 1"},
		{name: "size 0", q: url.Values{"PageSize": {"0"}}, wantErr: "PageSize must be between 1 and 100"},
		{name: "size 101", q: url.Values{"PageSize": {"101"}}, wantErr: "PageSize must be between 1 and 100"},
		{name: "number not an integer, reported before the size", q: url.Values{"PageNumber": {"x"}, "PageSize": {"0"}}, wantErr: `PageNumber "x" is not an integer`},
	})
}

func TestTokenPage(t *testing.T) {
	t.Parallel()
	next := func(tok string) map[string]any { return map[string]any{"NextToken": tok} }
	checkPaging(t, func(r *params) pager { return r.tokenPage(7) }, []pageCase{
		{name: "default size, more to come", q: url.Values{}, n: 25, wantPage: seq(0, 7), want: next("7")},
		{name: "next page from the token", q: url.Values{"NextToken": {"7"}, "MaxResults": {"10"}}, n: 25, wantPage: seq(7, 17), want: next("17")},
		{name: "last page has no token", q: url.Values{"NextToken": {"17"}, "MaxResults": {"10"}}, n: 25, wantPage: seq(17, 25), want: next("")},
		{name: "token beyond the end", q: url.Values{"NextToken": {"99"}}, n: 25, wantPage: []int{}, want: next("")},
		{name: "largest size", q: url.Values{"MaxResults": {"1000"}}, n: 25, wantPage: seq(0, 25), want: next("")},
		{name: "size 0", q: url.Values{"MaxResults": {"0"}}, wantErr: "MaxResults must be between 1 and 1000"},
		{name: "size 1001", q: url.Values{"MaxResults": {"1001"}}, wantErr: "MaxResults must be between 1 and 1000"},
		{name: "negative token", q: url.Values{"NextToken": {"-1"}}, wantErr: `bad NextToken "-1"`},
		{name: "foreign token", q: url.Values{"NextToken": {"abc"}}, wantErr: `bad NextToken "abc"`},
	})
}

// checkPaging runs each case through parse and listResult with a TotalCount
// skew of 2.
func checkPaging(t *testing.T, parse func(*params) pager, cases []pageCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := &params{q: tc.q}
			p := parse(r)
			if checkRefusal(t, r, tc.wantErr) {
				return
			}
			got := listResult(p, 2, "Items", seq(0, tc.n), func(i int) map[string]any { return map[string]any{"I": i} })
			if !reflect.DeepEqual(indexes(got["Items"]), tc.wantPage) || got["TotalCount"] != tc.n+2 {
				t.Fatalf("result = %v, want items %v and TotalCount %d (skewed by 2)", got, tc.wantPage, tc.n+2)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Fatalf("%s = %v, want %v", k, got[k], v)
				}
			}
		})
	}
}

func TestByIDAndMatching(t *testing.T) {
	t.Parallel()
	store := map[string]*Subnet{"sn-c": {ID: "sn-c"}, "sn-a": {ID: "sn-a"}, "sn-b": {ID: "sn-b"}}
	var got []string
	for _, sn := range matching(byID(store), func(sn *Subnet) bool { return sn.ID != "sn-b" }) {
		got = append(got, sn.ID)
	}
	if !reflect.DeepEqual(got, []string{"sn-a", "sn-c"}) {
		t.Fatalf("got %v, want sn-a, sn-c in id order", got)
	}
}

// checkRefusal reports whether r was refused, failing unless the refusal is
// the wanted InvalidParameter (or, with want empty, there is none).
func checkRefusal(t *testing.T, r *params, want string) bool {
	t.Helper()
	switch {
	case want == "" && r.err != nil:
		t.Fatalf("refused: %+v", r.err)
	case want != "" && (r.err == nil || r.err.message != want || r.err.code != codeInvalidParameter || r.err.status != 400):
		t.Fatalf("refusal = %+v, want 400 InvalidParameter %q", r.err, want)
	}
	return r.err != nil
}

func seq(lo, hi int) []int {
	out := []int{}
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return out
}

func indexes(items any) []int {
	out := []int{}
	for _, m := range items.([]map[string]any) {
		out = append(out, m["I"].(int))
	}
	return out
}
