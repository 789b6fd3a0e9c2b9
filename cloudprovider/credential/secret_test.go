package credential

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSecretNeverPrints(t *testing.T) {
	s := Secret("hunter2-very-secret")
	cfg := struct {
		Name  string
		Token Secret
	}{"c", s}
	for _, verb := range []string{"%s", "%v", "%+v", "%#v", "%q", "%x", "%X", "%d", "%10s"} {
		if out := fmt.Sprintf(verb, cfg); strings.Contains(out, "hunter2") || strings.Contains(out, fmt.Sprintf("%x", "hunter2")) {
			t.Errorf("%s printed the secret: %s", verb, out)
		}
		if out := fmt.Sprintf(verb, s); strings.Contains(out, "hunter2") {
			t.Errorf("%s of the bare secret printed it: %s", verb, out)
		}
	}
	if b, _ := json.Marshal(cfg); strings.Contains(string(b), "hunter2") {
		t.Errorf("JSON printed the secret: %s", b)
	}
	if err := fmt.Errorf("bad token %v", s); strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error printed the secret: %v", err)
	}
	if s.Reveal() != "hunter2-very-secret" || Secret("").String() != "" {
		t.Fatal("Reveal or empty String")
	}
	if got := ScrubSecrets("key hunter2-very-secret rejected", s, "ab"); got != "key <redacted> rejected" {
		t.Fatalf("ScrubSecrets = %q", got)
	}
}

func TestFileCredentialRotates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	write := func(v string, mod time.Time) {
		t.Helper()
		if err := os.WriteFile(path, []byte(v+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	base := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	write("first-key", base)
	c, err := FileCredential("token_file", path)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := c.Value(); v != "first-key" || c.Changed() {
		t.Fatalf("Value = %q, Changed %v", v.Reveal(), c.Changed())
	}
	write("second-key", base.Add(time.Minute))
	if !c.Changed() {
		t.Fatal("Changed missed a rotation")
	}
	if v, _ := c.Value(); v != "second-key" {
		t.Fatalf("after rotation Value = %q", v.Reveal())
	}
	// Mid-swap the file is gone: the last good key stays.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Value(); err != nil || v != "second-key" {
		t.Fatalf("mid-swap Value = %q, %v", v.Reveal(), err)
	}
	if s := fmt.Sprintf("%v %#v", c, c); strings.Contains(s, "key") && !strings.Contains(s, "token_file") {
		t.Fatalf("Credential printed %q", s)
	}
}

func TestFileCredentialErrorsNameThePathOnly(t *testing.T) {
	dir := t.TempDir()
	if _, err := FileCredential("token_file", filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "token_file "+dir) {
		t.Fatalf("missing file: %v", err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("  \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := FileCredential("token_file", empty); err == nil || !strings.Contains(err.Error(), "is empty") {
		t.Fatalf("empty file: %v", err)
	}
	if v, err := FixedCredential("x").Value(); err != nil || v != "x" {
		t.Fatal("FixedCredential")
	}
}

func TestReadKeyFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "key")
	if err := os.WriteFile(good, []byte("from-file-value\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var fromFile, direct, noFile, unreadable, emptied Secret = "", "given-value", "", "", ""
	var fromFileRead, directRead, unreadableRead string
	gone, problems := ReadKeyFiles(
		KeyFile{Value: &fromFile, Setting: "a-file", Path: good, Read: &fromFileRead},
		KeyFile{Value: &direct, Setting: "b-file", Path: filepath.Join(dir, "missing"), Read: &directRead},
		KeyFile{Value: &noFile, Setting: "c-file"},
		KeyFile{Value: &unreadable, Setting: "D_FILE=", Path: filepath.Join(dir, "missing"), Read: &unreadableRead},
		KeyFile{Value: &emptied, Setting: "e-file", Path: empty},
	)
	if fromFile != "from-file-value" || fromFileRead != good {
		t.Errorf("a file read: value %q, recorded path %q", fromFile.Reveal(), fromFileRead)
	}
	if direct != "given-value" || directRead != "" {
		t.Errorf("a value given directly: %q, path %q; want it kept and its file not read", direct.Reveal(), directRead)
	}
	if noFile != "" || unreadable != "" || unreadableRead != "" || emptied != "" {
		t.Errorf("secrets without a readable file were filled in")
	}
	if want := map[string]bool{"D_FILE=": true, "e-file": true}; fmt.Sprint(gone) != fmt.Sprint(want) {
		t.Errorf("unreadable = %v, want %v", gone, want)
	}
	if len(problems) != 2 || !strings.Contains(problems[0].Error(), "D_FILE="+filepath.Join(dir, "missing")) || !strings.Contains(problems[1].Error(), "e-file "+empty) {
		t.Errorf("problems = %v, want one per unreadable file naming its setting and path", problems)
	}
}

// TestFileFieldCredential: the value is found inside the file and follows a
// rewrite; content without a value keeps the last good one, and at start it
// is an error that names the setting and path, not the content.
func TestFileFieldCredential(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "config")
	write := func(v string, mod time.Time) {
		t.Helper()
		if err := os.WriteFile(path, []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	extract := func(data []byte) (Secret, error) {
		_, v, ok := strings.Cut(string(data), "key=")
		if !ok {
			return "", errors.New("no key= line")
		}
		return Secret(v), nil
	}
	base := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	write("other=1 key=first-key", base)
	c, err := FileFieldCredential("token in --cloud-config", path, extract)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := c.Value(); v != "first-key" {
		t.Fatalf("Value = %q", v.Reveal())
	}
	write("other=2 key=second-key", base.Add(time.Minute))
	if v, _ := c.Value(); v != "second-key" {
		t.Fatalf("after a rewrite Value = %q", v.Reveal())
	}
	write("other=3 only", base.Add(2*time.Minute))
	if v, err := c.Value(); err != nil || v != "second-key" {
		t.Fatalf("rewritten without a key: %q, %v; want the last good one", v.Reveal(), err)
	}
	fresh := filepath.Join(t.TempDir(), "fresh")
	if err := os.WriteFile(fresh, []byte("secret-content-only"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = FileFieldCredential("token in --cloud-config", fresh, extract)
	if err == nil || !strings.Contains(err.Error(), fresh) || strings.Contains(err.Error(), "secret-content-only") {
		t.Fatalf("start-up error %v: want one naming the path and not the content", err)
	}
}
