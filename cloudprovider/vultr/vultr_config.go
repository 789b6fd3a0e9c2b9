package vultr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr/vultrapi"
)

// Secret is a string that never prints: String, GoString and JSON encoding
// all redact it, so a Config can be logged or wrapped into errors safely.
type Secret string

const redacted = "[redacted]"

// String implements fmt.Stringer.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// GoString implements fmt.GoStringer (used by %#v).
func (s Secret) GoString() string { return fmt.Sprintf("%q", s.String()) }

// MarshalJSON redacts the value.
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// Config is the --cloud-config JSON file. The upstream fields cluster_id and
// token keep their meaning; token_file, the VULTR_API_KEY environment variable
// and api_url are our additions.
//
// Token precedence: token, then token_file, then VULTR_API_KEY. api_url
// defaults to https://api.vultr.com; paths carry /v2 themselves.
type Config struct {
	// ClusterID is the VKE cluster UUID. Required.
	ClusterID string `json:"cluster_id"`
	// Token is the Vultr API key given literally.
	Token Secret `json:"token"`
	// TokenFile is a path holding the API key (e.g. a mounted Secret). It is
	// re-read whenever the file changes, so a rotated Secret needs no restart.
	TokenFile string `json:"token_file"`
	// APIURL overrides the API endpoint (tests, --simulate).
	APIURL string `json:"api_url"`

	// envToken is VULTR_API_KEY as read at load time.
	envToken Secret
}

// String implements fmt.Stringer without revealing the token.
func (c Config) String() string {
	src := "none"
	switch {
	case c.Token != "":
		src = "token"
	case c.TokenFile != "":
		src = "token_file " + c.TokenFile
	case c.envToken != "":
		src = EnvAPIKey
	}
	return fmt.Sprintf("vultr config{cluster_id: %q, api_url: %q, token source: %s}", c.ClusterID, c.apiURL(), src)
}

// GoString implements fmt.GoStringer so %#v cannot reveal the token either.
func (c Config) GoString() string { return c.String() }

// Format implements fmt.Formatter so that %+v, %v and %s print String().
func (c Config) Format(f fmt.State, verb rune) { _, _ = f.Write([]byte(c.String())) }

func (c Config) apiURL() string {
	if c.APIURL == "" {
		return vultrapi.DefaultBaseURL
	}
	return c.APIURL
}

// ParseConfig decodes the cloud-config JSON. Like upstream, unknown keys are
// ignored; type errors name the field but never quote its value.
func ParseConfig(data []byte) (*Config, error) {
	var c Config
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("vultr cloud config: file is empty; want {\"cluster_id\": ..., \"token_file\": ...}")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&c); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, fmt.Errorf("vultr cloud config: field %q must be a %s", te.Field, te.Type.Kind())
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("vultr cloud config: invalid JSON at byte %d", se.Offset)
		}
		return nil, fmt.Errorf("vultr cloud config: invalid JSON: %w", err)
	}
	c.ClusterID = strings.TrimSpace(c.ClusterID)
	c.Token = Secret(strings.TrimSpace(string(c.Token)))
	c.TokenFile = strings.TrimSpace(c.TokenFile)
	c.APIURL = strings.TrimSpace(c.APIURL)
	return &c, nil
}

// LoadConfig reads the config file at path, applies the environment fallback
// and validates the result. getenv is os.Getenv outside tests.
func LoadConfig(path string, getenv func(string) string) (*Config, error) {
	if path == "" {
		return nil, errors.New("vultr: no cloud config given; pass --cloud-config with {\"cluster_id\": ..., \"token\" or \"token_file\": ...}")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("vultr: read cloud config: %w", err)
	}
	c, err := ParseConfig(data)
	if err != nil {
		return nil, err
	}
	if getenv != nil {
		c.envToken = Secret(strings.TrimSpace(getenv(EnvAPIKey)))
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// Validate reports every problem at once.
func (c *Config) Validate() error {
	var errs []error
	if c.ClusterID == "" {
		errs = append(errs, errors.New("cluster_id is required"))
	}
	if c.Token == "" && c.TokenFile == "" && c.envToken == "" {
		errs = append(errs, fmt.Errorf("no API key: set token or token_file in the cloud config, or %s", EnvAPIKey))
	}
	if c.Token == "" && c.TokenFile != "" {
		if _, err := readTokenFile(c.TokenFile); err != nil {
			errs = append(errs, err)
		}
	}
	if c.APIURL != "" {
		u, err := url.Parse(c.APIURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("api_url %q must be an absolute http(s) URL", c.APIURL))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("vultr cloud config: %w", problems(errs))
	}
	return nil
}

// problems is errors.Join on one line, so the whole list fits a log line.
type problems []error

func (p problems) Error() string {
	msgs := make([]string, len(p))
	for i, e := range p {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "; ")
}

func (p problems) Unwrap() []error { return p }

// TokenSource returns where requests get their bearer token from.
func (c *Config) TokenSource() oauth2.TokenSource {
	switch {
	case c.Token != "":
		return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: string(c.Token), TokenType: "Bearer"})
	case c.TokenFile != "":
		return &fileTokenSource{path: c.TokenFile}
	default:
		return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: string(c.envToken), TokenType: "Bearer"})
	}
}

func readTokenFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		// The error names the path only; the content is never quoted.
		return "", fmt.Errorf("token_file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("token_file %s is empty", path)
	}
	return tok, nil
}

// fileTokenSource re-reads the token file when its modification time or size
// changes. Kubernetes updates a mounted Secret by swapping a symlink, which
// os.Stat follows, so a rotation is seen on the next request.
type fileTokenSource struct {
	path string

	mu      sync.Mutex
	modTime time.Time
	size    int64
	token   string
}

// Token implements oauth2.TokenSource.
func (f *fileTokenSource) Token() (*oauth2.Token, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, err := os.Stat(f.path)
	if err != nil {
		if f.token != "" {
			// Mid-swap during a Secret update; keep the last good key.
			return &oauth2.Token{AccessToken: f.token, TokenType: "Bearer"}, nil
		}
		return nil, fmt.Errorf("token_file: %w", err)
	}
	if f.token == "" || !st.ModTime().Equal(f.modTime) || st.Size() != f.size {
		tok, err := readTokenFile(f.path)
		if err != nil {
			return nil, err
		}
		f.token, f.modTime, f.size = tok, st.ModTime(), st.Size()
	}
	return &oauth2.Token{AccessToken: f.token, TokenType: "Bearer"}, nil
}
