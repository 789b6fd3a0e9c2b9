package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestHelpNamesTheCommands: --help starts with what the binary does and its
// commands, then our flags, then klog's apart.
func TestHelpNamesTheCommands(t *testing.T) {
	code, _, stderr := runArgs(t, "--help")
	if code != 0 {
		t.Fatalf("--help exit %d", code)
	}
	for _, cmd := range []string{"inspect", "probe", "preflight", "help"} {
		if !regexp.MustCompile(`(?m)^  ` + cmd + ` +\S`).MatchString(stderr) {
			t.Errorf("--help does not list the %s command:\n%s", cmd, stderr)
		}
	}
	commands, ours, logging := strings.Index(stderr, "Commands:"), strings.Index(stderr, "\nFlags:"), strings.Index(stderr, "\nLogging flags (klog):")
	if commands < 0 || ours < commands || logging < ours {
		t.Fatalf("want commands, our flags, klog's flags in that order:\n%s", stderr)
	}
	if own, logs := stderr[ours:logging], stderr[logging:]; !strings.Contains(own, "-cloud-provider") || strings.Contains(own, "-logtostderr") ||
		!strings.Contains(logs, "-logtostderr") || strings.Contains(logs, "-cloud-provider") {
		t.Errorf("klog's flags are not apart from ours:\n%s", stderr)
	}
}

// TestHelpCommand: help [command] prints on stdout the server's usage or the
// command's, each command's with an example; an unknown command is exit 2.
func TestHelpCommand(t *testing.T) {
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"help"}, []string{"Commands:", "preflight", "Logging flags (klog):"}},
		{[]string{"help", "--help"}, []string{"Commands:"}},
		{[]string{"help", "inspect"}, []string{"Usage: cluster-autoscaler-provider inspect [flags]", "Examples:", "Exit codes:", "-scale-up"}},
		{[]string{"help", "probe"}, []string{"Usage: cluster-autoscaler-provider probe [flags]", "Examples:", "-address"}},
		{[]string{"help", "preflight"}, []string{"Usage: cluster-autoscaler-provider preflight [server flags]", "Examples:", "-nodes", "Logging flags (klog):"}},
		{[]string{"probe", "--help"}, nil},
		{[]string{"preflight", "--help"}, nil},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, stderr := runArgs(t, tc.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			text := out + stderr
			if tc.args[0] == "help" && out == "" {
				t.Fatalf("help printed nothing on stdout")
			}
			if tc.want == nil {
				tc.want = []string{"Usage: cluster-autoscaler-provider " + tc.args[0], "Examples:"}
			}
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("lacks %q:\n%s", w, text)
				}
			}
		})
	}
	code, _, stderr := runArgs(t, "help", "frobnicate")
	if code != 2 || !strings.Contains(stderr, `unknown command "frobnicate"`) || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("exit %d stderr %q", code, stderr)
	}
}
