package main

import (
	"context"
	"strings"
	"testing"
)

func TestCommandLineErrors(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no command", nil, 2, "usage"},
		{"unknown command", []string{"deploy"}, 2, `unknown command "deploy"`},
		{"unknown provider", []string{"build", "--provider=aws"}, 2, `provider "aws"`},
		{"bad platform", []string{"build", "--platforms=amd64"}, 2, "want os/arch"},
		{"bad epoch", []string{"build", "--source-date-epoch=now"}, 2, "--source-date-epoch"},
		{"ldflags without version", []string{"build", "--ldflags=-s -w"}, 2, "main.version"},
		{"stray argument", []string{"build", "extra"}, 2, "unexpected arguments"},
		{"push without image", []string{"push", "--layout=x", "--tag=t"}, 2, "--image"},
		{"push from a missing layout", []string{"push", "--layout=" + t.TempDir() + "/none", "--image=r/x", "--tag=t"}, 1, "read layout"},
		{"unknown flag", []string{"push", "--registry=x"}, 2, "registry"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb strings.Builder
			code := run(context.Background(), tc.args, &out, &errb)
			if code != tc.code || !strings.Contains(errb.String(), tc.want) {
				t.Fatalf("exit %d (want %d), stderr %q (want %q)", code, tc.code, errb.String(), tc.want)
			}
		})
	}
}
