package cloudprovider

import (
	"strings"
	"testing"
)

func TestParseNodeGroupSpec(t *testing.T) {
	cases := []struct {
		in      string
		want    NodeGroupSpec
		errPart string
	}{
		{in: "1:10:pool-a", want: NodeGroupSpec{MinSize: 1, MaxSize: 10, Name: "pool-a"}},
		{in: "0:3:scg-abc", want: NodeGroupSpec{MinSize: 0, MaxSize: 3, Name: "scg-abc"}},
		{in: "1:5:name:with:colons", want: NodeGroupSpec{MinSize: 1, MaxSize: 5, Name: "name:with:colons"}},
		{in: "1:10", errPart: "want min:max:name"},
		{in: "x:10:p", errPart: `min "x"`},
		{in: "-1:10:p", errPart: `min "-1"`},
		{in: "1:y:p", errPart: `max "y"`},
		{in: "5:2:p", errPart: "below min"},
		{in: "0:0:p", errPart: "at least 1"},
		{in: "1:2: ", errPart: "name is empty"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseNodeGroupSpec(tc.in)
			if tc.errPart != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errPart) || !strings.Contains(err.Error(), "--nodes") {
					t.Fatalf("err = %v, want one naming --nodes and %q", err, tc.errPart)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
			if got.String() != tc.in {
				t.Fatalf("String() = %q, want %q", got.String(), tc.in)
			}
		})
	}
}

func TestParseNodeGroupSpecsReportsAll(t *testing.T) {
	_, err := ParseNodeGroupSpecs([]string{"1:x:a", "1:2:b", "1:2:b", "bad"})
	if err == nil {
		t.Fatal("want an error")
	}
	for _, part := range []string{`"1:x:a"`, `"b" given twice`, `"bad"`} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q lacks %s", err, part)
		}
	}
	specs, err := ParseNodeGroupSpecs([]string{"1:2:a", "0:4:b"})
	if err != nil || len(specs) != 2 || specs[1].Name != "b" {
		t.Fatalf("got %v, %v", specs, err)
	}
}
