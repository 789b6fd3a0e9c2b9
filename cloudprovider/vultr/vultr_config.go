package vultr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"golang.org/x/oauth2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/credential"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/vultr/vultrapi"
)

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
	Token credential.Secret `json:"token"`
	// TokenFile is a path holding the API key (e.g. a mounted Secret). It is
	// re-read whenever the file changes, so a rotated Secret needs no restart.
	TokenFile string `json:"token_file"`
	// APIURL overrides the API endpoint (tests, --simulate).
	APIURL string `json:"api_url"`

	// envToken is VULTR_API_KEY as read at load time.
	envToken credential.Secret
	// path is the file the config was loaded from; a token given in it is
	// re-read from there, so a rotated Secret needs no restart.
	path string
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
	c.Token = credential.Secret(strings.TrimSpace(c.Token.Reveal()))
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
		c.envToken = credential.Secret(strings.TrimSpace(getenv(EnvAPIKey)))
	}
	c.path = path
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
		errs = append(errs, fmt.Errorf("no API key: set token_file (a file holding it) or token in the cloud config, or %s", EnvAPIKey))
	}
	if c.Token == "" && c.TokenFile != "" {
		if _, err := credential.FileCredential("token_file", c.TokenFile); err != nil {
			errs = append(errs, err)
		}
	}
	if c.APIURL != "" {
		u, err := url.Parse(c.APIURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("api_url %q must be an absolute http(s) URL", c.APIURL))
		}
	}
	for i, err := range errs {
		errs[i] = fmt.Errorf("cloud config: %w", err)
	}
	// One problem per line, each naming the provider.
	return cloudprovider.ConfigProblems(ProviderName, errs...)
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

// credentialTokenSource hands oauth2 the current key of a credential, which
// follows a rotated token_file.
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
