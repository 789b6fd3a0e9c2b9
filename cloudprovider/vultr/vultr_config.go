package vultr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"strings"

	"golang.org/x/oauth2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/credential"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr/vultrapi"
)

// Config is the --cloud-config JSON file: upstream's cluster_id and token,
// plus token_file and api_url. The key comes from token, then token_file, then
// VULTR_API_KEY. api_url defaults to https://api.vultr.com, without /v2.
type Config struct {
	// ClusterID is the VKE cluster's ID, a UUID. Required; another form
	// only warns (configWarnings).
	ClusterID string `json:"cluster_id"`
	// Token is the Vultr API key given literally.
	Token credential.Secret `json:"token"`
	// TokenFile is a file holding the API key, re-read when it changes.
	TokenFile string `json:"token_file"`
	// APIURL overrides the API endpoint (tests, --simulate).
	APIURL string `json:"api_url"`

	// envToken is VULTR_API_KEY at load time.
	envToken credential.Secret
	// path is the config file ("" for none), re-read for a rotated token and
	// named in errors; positions maps each top-level key to its value's offset.
	path      string
	positions map[string]int64
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

// ParseConfig decodes the cloud-config JSON, ignoring unknown keys as upstream
// does. Errors give line and column and never quote a value: it may be the token.
func ParseConfig(data []byte) (*Config, error) {
	return parseConfig("", data)
}

// parseConfig is ParseConfig for the file named source ("" for none).
func parseConfig(source string, data []byte) (*Config, error) {
	c := Config{path: source}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("vultr: cloud config%s: file is empty; want {\"cluster_id\": ..., \"token_file\": ...}", c.named())
	}
	c.positions = valuePositions(data)
	dec := json.NewDecoder(bytes.NewReader(data))
	err := dec.Decode(&c)
	if err == nil {
		// One object and nothing after it.
		at := dec.InputOffset()
		for at < int64(len(data)) && strings.IndexByte(" \t\r\n", data[at]) >= 0 {
			at++
		}
		if _, terr := dec.Token(); terr != io.EOF {
			return nil, fmt.Errorf("vultr: cloud config %s: invalid JSON: expected the end of the file after the closing }", c.position(data, at))
		}
	}
	if err != nil {
		var te *json.UnmarshalTypeError
		var se *json.SyntaxError
		switch {
		case errors.As(err, &te):
			at, ok := c.positions[strings.ToLower(te.Field)]
			if !ok {
				at = te.Offset
			}
			return nil, fmt.Errorf("vultr: cloud config %s: expected a %s for %q, got a %s", c.position(data, at), te.Type.Kind(), te.Field, te.Value)
		case errors.As(err, &se):
			return nil, fmt.Errorf("vultr: cloud config %s: invalid JSON: %s", c.position(data, se.Offset-1), syntaxExpectation(se))
		case errors.Is(err, io.ErrUnexpectedEOF):
			return nil, fmt.Errorf("vultr: cloud config %s: invalid JSON: the file ends inside the object; expected the rest of it and a closing }", c.position(data, int64(len(data))))
		}
		return nil, fmt.Errorf("vultr: cloud config%s: invalid JSON: %w", c.named(), err)
	}
	c.ClusterID = strings.TrimSpace(c.ClusterID)
	c.Token = credential.Secret(strings.TrimSpace(c.Token.Reveal()))
	c.TokenFile = strings.TrimSpace(c.TokenFile)
	c.APIURL = strings.TrimSpace(c.APIURL)
	return &c, nil
}

// named is " <file>" when the config came from a file, else "".
func (c *Config) named() string {
	if c.path == "" {
		return ""
	}
	return " " + c.path
}

// position renders an offset of data as file:line:column, or line:column.
func (c *Config) position(data []byte, offset int64) string {
	offset = max(0, min(offset, int64(len(data))))
	line := 1 + bytes.Count(data[:offset], []byte("\n"))
	col := offset - int64(bytes.LastIndexByte(data[:offset], '\n'))
	if c.path == "" {
		return fmt.Sprintf("%d:%d", line, col)
	}
	return fmt.Sprintf("%s:%d:%d", c.path, line, col)
}

// field is the error prefix naming where key's value is in the file.
func (c *Config) field(data []byte, key string) string {
	if at, ok := c.positions[key]; ok && data != nil {
		return " " + c.position(data, at) + ": "
	}
	return c.named() + ": "
}

// valuePositions maps each top-level key, lowercased, to its value's offset.
func valuePositions(data []byte) map[string]int64 {
	out := map[string]int64{}
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return out
	}
	for dec.More() {
		t, err := dec.Token()
		key, ok := t.(string)
		if err != nil || !ok {
			return out
		}
		at := dec.InputOffset()
		for at < int64(len(data)) && strings.IndexByte(" \t\r\n:", data[at]) >= 0 {
			at++
		}
		if _, dup := out[strings.ToLower(key)]; !dup {
			out[strings.ToLower(key)] = at
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return out
		}
	}
	return out
}

// syntaxExpectation says what the parser expected where it stopped, without
// the character found, which may be part of the token.
func syntaxExpectation(se *json.SyntaxError) string {
	msg := se.Error()
	for _, e := range []struct{ context, expected string }{
		{"looking for beginning of object key string", "expected a quoted key or }"},
		{"after object key:value pair", "expected , or }"},
		{"after object key", "expected : after the key"},
		{"after array element", "expected , or ]"},
		{"looking for beginning of value", "expected a value: a quoted string, a number, true, false, null, [ or {"},
		{"after top-level value", "expected the end of the file after the closing }"},
		{"in string literal", "a control character in a quoted string: escape it"},
		{"in numeric literal", "a malformed number"},
		{"in literal", "expected true, false or null (strings need quotes)"},
	} {
		if strings.Contains(msg, e.context) {
			return e.expected
		}
	}
	return "malformed JSON"
}

// LoadConfig reads and validates the config at path; getenv gives VULTR_API_KEY.
func LoadConfig(path string, getenv func(string) string) (*Config, error) {
	if path == "" {
		return nil, errors.New("vultr: no cloud config given; pass --cloud-config with {\"cluster_id\": ..., \"token\" or \"token_file\": ...}")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("vultr: read cloud config: %w", err)
	}
	c, err := parseConfig(path, data)
	if err != nil {
		return nil, err
	}
	if getenv != nil {
		c.envToken = credential.Secret(strings.TrimSpace(getenv(EnvAPIKey)))
	}
	if err := c.validate(data); err != nil {
		return nil, err
	}
	return c, nil
}

// Validate reports every problem at once.
func (c *Config) Validate() error { return c.validate(nil) }

// validate is Validate; given the file's data, problems name their line.
func (c *Config) validate(data []byte) error {
	var errs []error
	if c.ClusterID == "" {
		errs = append(errs, fmt.Errorf("%scluster_id is required: give the VKE cluster's ID", c.field(nil, "")))
	}
	if c.Token == "" && c.TokenFile == "" && c.envToken == "" {
		errs = append(errs, fmt.Errorf("%sno API key: set token_file (a file holding it) or token in the cloud config, or %s", c.field(nil, ""), EnvAPIKey))
	}
	if c.Token == "" && c.TokenFile != "" {
		if _, err := credential.FileCredential("token_file", c.TokenFile); err != nil {
			errs = append(errs, fmt.Errorf("%s%w", c.field(data, "token_file"), err))
		}
	}
	if c.APIURL != "" {
		u, err := url.Parse(c.APIURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("%sapi_url %q must be an absolute http(s) URL", c.field(data, "api_url"), c.APIURL))
		}
	}
	for i, err := range errs {
		errs[i] = fmt.Errorf("cloud config%w", err)
	}
	return cloudprovider.ConfigProblems(ProviderName, errs...)
}

// uuidPattern is the form of Vultr's ids: 8-4-4-4-12 hex digits.
var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// configWarnings is the registration's Warnings: a cluster_id that is not a
// UUID. Upstream takes any id, and the first list call refuses a wrong
// one, so it only warns.
func configWarnings(opts registry.BuildOptions) []string {
	data, err := os.ReadFile(opts.CloudConfig)
	if err != nil {
		return nil
	}
	c, err := parseConfig(opts.CloudConfig, data)
	if err != nil || c.ClusterID == "" || uuidPattern.MatchString(c.ClusterID) {
		return nil
	}
	return []string{fmt.Sprintf("cloud config%scluster_id %q is not a UUID, the form of VKE cluster IDs (8-4-4-4-12 hex digits, as the cluster's page or GET /v2/kubernetes/clusters shows it): it is used as given",
		c.field(data, "cluster_id"), truncate(c.ClusterID, 64))}
}

// truncate bounds a quoted setting in a message.
func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// TokenSource returns where requests get their bearer token from.
func (c *Config) TokenSource() oauth2.TokenSource {
	switch {
	case c.Token != "" && c.path != "":
		// The in-tree layout: the token inside the cloud config, a mounted Secret.
		cred, err := credential.FileFieldCredential("token in --cloud-config", c.path, configToken)
		if err != nil {
			return &credentialTokenSource{cred: credential.FixedCredential(c.Token)}
		}
		return &credentialTokenSource{cred: cred}
	case c.Token != "":
		return &credentialTokenSource{cred: credential.FixedCredential(c.Token)}
	case c.TokenFile != "":
		cred, err := credential.FileCredential("token_file", c.TokenFile)
		if err != nil {
			return &credentialTokenSource{err: err}
		}
		return &credentialTokenSource{cred: cred}
	default:
		return &credentialTokenSource{cred: credential.FixedCredential(c.envToken)}
	}
}

// configToken reads the token out of a cloud config's content.
func configToken(data []byte) (credential.Secret, error) {
	c, err := ParseConfig(data)
	if err != nil {
		return "", err
	}
	if c.Token == "" {
		return "", errors.New("the file has no token")
	}
	return c.Token, nil
}

// credentialTokenSource hands oauth2 a credential's current key.
type credentialTokenSource struct {
	cred *credential.Credential
	err  error
}

// Token implements oauth2.TokenSource.
func (s *credentialTokenSource) Token() (*oauth2.Token, error) {
	if s.err != nil {
		return nil, s.err
	}
	v, err := s.cred.Value()
	if err != nil {
		return nil, err
	}
	return &oauth2.Token{AccessToken: v.Reveal(), TokenType: "Bearer"}, nil
}

// endpoint is the registration's Endpoint: one API host for every region.
func endpoint(opts registry.BuildOptions) registry.Endpoint {
	ep := registry.Endpoint{
		Host:        hostOf(vultrapi.DefaultBaseURL),
		Setting:     "api_url in --cloud-config",
		Credentials: "the API key (token or token_file in --cloud-config, or " + EnvAPIKey + ")",
		IDs:         "cluster_id in --cloud-config",
	}
	if data, err := os.ReadFile(opts.CloudConfig); err == nil {
		if c, err := ParseConfig(data); err == nil && c.APIURL != "" {
			ep.Host, ep.Overridden = hostOf(c.APIURL), true
		}
	}
	return ep
}

// hostOf is a URL's host, or the text itself when it does not parse.
func hostOf(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Host
	}
	return raw
}
