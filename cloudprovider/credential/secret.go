package credential

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

// Secret is a credential value that never prints: every fmt verb, String,
// GoString and JSON encoding show "[redacted]" (or "" when empty), so configs
// holding one can be logged and wrapped into errors safely. Reveal is the one
// way to the value, for the code that signs or sends a request.
type Secret string

const redactedSecret = "[redacted]"

// String implements fmt.Stringer.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redactedSecret
}

// GoString implements fmt.GoStringer (%#v).
func (s Secret) GoString() string { return fmt.Sprintf("%q", s.String()) }

// Format implements fmt.Formatter, so no verb (%s, %v, %q, %x, %d...) can
// print the value.
func (s Secret) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		_, _ = fmt.Fprint(f, s.GoString())
		return
	}
	_, _ = fmt.Fprint(f, s.String())
}

// MarshalJSON redacts the value.
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// Reveal returns the value.
func (s Secret) Reveal() string { return string(s) }

// ScrubSecrets replaces every occurrence of the secrets in msg (a server
// message may quote the key it rejected). Very short values are left alone:
// replacing them would garble the message without protecting anything.
func ScrubSecrets(msg string, secrets ...Secret) string {
	for _, s := range secrets {
		if len(s) >= 4 {
			msg = strings.ReplaceAll(msg, string(s), "<redacted>")
		}
	}
	return msg
}

// Credential is the one credential source of the three clouds: a fixed
// value (flag, config key, environment), or a file (a mounted Kubernetes
// Secret) re-read whenever it changes, so a rotated key needs no restart.
// Kubernetes updates a mounted Secret by swapping a symlink, which os.Stat
// follows; while the file is missing mid-swap the last good value stays.
type Credential struct {
	// name says where the value comes from, for errors ("token_file /x").
	name  string
	path  string
	fixed Secret
	// extract, when set, finds the value inside the file's content.
	extract func([]byte) (Secret, error)

	mu      sync.Mutex
	modTime time.Time
	size    int64
	value   Secret
}

// FixedCredential returns a credential that never changes.
func FixedCredential(s Secret) *Credential { return &Credential{fixed: s} }

// FileCredential reads the credential in path now, so a bad path or an empty
// file is a configuration error at start-up, and again whenever the file
// changes. name (the config key or variable naming the file) prefixes
// errors; they name the path, never the content.
func FileCredential(name, path string) (*Credential, error) {
	c := &Credential{name: name, path: path}
	if _, err := c.Value(); err != nil {
		return nil, err
	}
	return c, nil
}

// FileFieldCredential is FileCredential for a file that holds the value
// among other settings (a token inside a JSON cloud config): extract finds
// it in the content, and its errors must not quote the content. A rewritten
// file without a value keeps the last good one, as a missing file does.
func FileFieldCredential(name, path string, extract func([]byte) (Secret, error)) (*Credential, error) {
	c := &Credential{name: name, path: path, extract: extract}
	if _, err := c.Value(); err != nil {
		return nil, err
	}
	return c, nil
}

// KeyFile is a secret a configuration may give as a file instead of a value.
type KeyFile struct {
	// Value is the secret. One set directly wins, and its file is not read.
	Value *Secret
	// Setting names the file's setting, as FileCredential's name: a config
	// key ("access-key-file") or an environment variable followed by "="
	// ("EXOSCALE_API_KEY_FILE=").
	Setting string
	// Path is the file ("" when the setting is not given).
	Path string
	// Read, when set, receives Path once the file was read.
	Read *string
}

// ReadKeyFiles fills every unset Value from its file. It returns one problem
// per file that cannot be read, and the Settings of those files: an
// unreadable file is that secret's one problem, so a loader reporting every
// problem at once does not report the secret missing as well.
func ReadKeyFiles(files ...KeyFile) (unreadable map[string]bool, problems []error) {
	unreadable = map[string]bool{}
	for _, f := range files {
		if *f.Value != "" || f.Path == "" {
			continue
		}
		// The path is not secret; the content never appears in errors.
		cred, err := FileCredential(f.Setting, f.Path)
		if err != nil {
			problems = append(problems, err)
			unreadable[f.Setting] = true
			continue
		}
		*f.Value, _ = cred.Value()
		if f.Read != nil {
			*f.Read = f.Path
		}
	}
	return unreadable, problems
}

// CredentialFrom returns the file credential when path is set and readable
// (name is the setting naming the file), else the fixed value. Config
// loaders validate the file first; this is for building clients.
func CredentialFrom(value Secret, name, path string) *Credential {
	if path != "" {
		if c, err := FileCredential(name, path); err == nil {
			return c
		}
	}
	return FixedCredential(value)
}

// String says where the value comes from, never what it is.
func (c *Credential) String() string {
	if c == nil {
		return "<unset>"
	}
	if c.path != "" {
		return c.source()
	}
	if c.fixed == "" {
		return "<unset>"
	}
	return c.fixed.String()
}

// GoString is String, for %#v.
func (c *Credential) GoString() string { return c.String() }

// IsSet reports whether the credential has a source.
func (c *Credential) IsSet() bool { return c != nil && (c.path != "" || c.fixed != "") }

// Value returns the current value, re-reading the file when it changed.
func (c *Credential) Value() (Secret, error) {
	if c == nil {
		return "", errors.New("credential not set")
	}
	if c.path == "" {
		return c.fixed, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	st, err := os.Stat(c.path)
	if err != nil {
		if c.value != "" {
			return c.value, nil
		}
		return "", c.fileError(err)
	}
	if c.value != "" && st.ModTime().Equal(c.modTime) && st.Size() == c.size {
		return c.value, nil
	}
	data, err := os.ReadFile(c.path)
	if err != nil {
		if c.value != "" {
			return c.value, nil
		}
		return "", c.fileError(err)
	}
	v := Secret(strings.TrimSpace(string(data)))
	if c.extract != nil {
		if v, err = c.extract(data); err != nil {
			if c.value != "" {
				return c.value, nil
			}
			return "", fmt.Errorf("%s: %w", c.source(), err)
		}
		v = Secret(strings.TrimSpace(v.Reveal()))
	}
	if v == "" {
		if c.value != "" {
			return c.value, nil
		}
		return "", fmt.Errorf("%s: the file is empty", c.source())
	}
	c.value, c.modTime, c.size = v, st.ModTime(), st.Size()
	return v, nil
}

// Changed reports whether the file changed since the value was last read;
// SDK credential providers use it as their expiry.
func (c *Credential) Changed() bool {
	if c == nil || c.path == "" {
		return false
	}
	st, err := os.Stat(c.path)
	c.mu.Lock()
	defer c.mu.Unlock()
	return err == nil && (!st.ModTime().Equal(c.modTime) || st.Size() != c.size)
}

func (c *Credential) fileError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("%s: %w", c.source(), err)
}

// source names the file and the setting that names it: "token_file
// /etc/key", or "EXOSCALE_API_KEY_FILE=/etc/key" for an environment variable
// (a name ending in "=").
func (c *Credential) source() string {
	if strings.HasSuffix(c.name, "=") {
		return c.name + c.path
	}
	return c.name + " " + c.path
}
