package volcengine

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"gopkg.in/gcfg.v1"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/credential"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
)

// fileConfig is the --cloud-config INI file; *-key-file keys name key files.
type fileConfig struct {
	Global struct {
		RegionID      string `gcfg:"region-id"`
		AccessKey     string `gcfg:"access-key"`
		AccessKeyFile string `gcfg:"access-key-file"`
		SecretKey     string `gcfg:"secret-key"`
		SecretKeyFile string `gcfg:"secret-key-file"`
		Endpoint      string `gcfg:"endpoint"`
		Scheme        string `gcfg:"scheme"`
	}
}

// Config is the resolved configuration. Each value comes from the file, else
// the environment (REGION_ID, ACCESS_KEY, SECRET_KEY, ENDPOINT), else a default.
type Config struct {
	Region    string
	AccessKey credential.Secret
	SecretKey credential.Secret
	// AccessKeyFile and SecretKeyFile are re-read on change (rotated Secrets).
	AccessKeyFile string
	SecretKeyFile string
	// Endpoint is a host (default open.volcengineapi.com) or a URL with scheme.
	Endpoint string
	// Scheme is "https" (default) or "http"; "http" is for fakes and --simulate.
	Scheme string
}

// String redacts the keys: configs get printed and logged, keys must not be.
func (c Config) String() string {
	accessKey, secretKey := c.Credentials()
	return fmt.Sprintf("volcengine.Config{Region:%q Endpoint:%q Scheme:%q AccessKey:%s SecretKey:%s}",
		c.Region, c.Endpoint, c.Scheme, accessKey, secretKey)
}

// Credentials returns the key sources the client signs with.
func (c Config) Credentials() (accessKey, secretKey *credential.Credential) {
	return credential.CredentialFrom(c.AccessKey, "access-key-file", c.AccessKeyFile), credential.CredentialFrom(c.SecretKey, "secret-key-file", c.SecretKeyFile)
}

// GoString redacts like String, for %#v.
func (c Config) GoString() string { return c.String() }

// LoadConfig reads path (may be "") and fills gaps from getenv (os.Getenv when nil).
func LoadConfig(path string, getenv func(string) string) (Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	var fc fileConfig
	if path != "" {
		err := gcfg.ReadFileInto(&fc, path)
		if ferr := gcfg.FatalOnly(err); ferr != nil {
			var pe *os.PathError
			if errors.As(ferr, &pe) {
				return Config{}, fmt.Errorf("read cloud config: %w", ferr)
			}
			// gcfg names positions, never values, so no key leaks here.
			return Config{}, fmt.Errorf("cloud config %w", ferr)
		}
		if err != nil {
			klog.InfoS("Ignoring unknown cloud config entries", "provider", ProviderName, "file", path, "warning", err.Error())
		}
	}
	g := fc.Global
	cfg := Config{
		Region:    firstNonEmpty(g.RegionID, getenv(envRegion)),
		AccessKey: credential.Secret(g.AccessKey),
		SecretKey: credential.Secret(g.SecretKey),
		Endpoint:  firstNonEmpty(g.Endpoint, getenv(envEndpoint), DefaultEndpoint),
		Scheme:    strings.ToLower(firstNonEmpty(g.Scheme, "https")),
	}
	unreadable, errs := credential.ReadKeyFiles(
		credential.KeyFile{Value: &cfg.AccessKey, Setting: "access-key-file", Path: g.AccessKeyFile, Read: &cfg.AccessKeyFile},
		credential.KeyFile{Value: &cfg.SecretKey, Setting: "secret-key-file", Path: g.SecretKeyFile, Read: &cfg.SecretKeyFile},
	)
	cfg.AccessKey = credential.Secret(firstNonEmpty(cfg.AccessKey.Reveal(), getenv(envAccessKey)))
	cfg.SecretKey = credential.Secret(firstNonEmpty(cfg.SecretKey.Reveal(), getenv(envSecretKey)))
	if err := cloudprovider.ConfigProblems(ProviderName, append(errs, cfg.validate(unreadable))...); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// regionLocation is the registration's Location. One gateway serves every
// region, so a misspelt region shows only in the gateway's answers.
func regionLocation(opts registry.BuildOptions) registry.Location {
	cfg, err := LoadConfig(opts.CloudConfig, opts.Env())
	if err != nil {
		// Build reports the configuration's problems itself.
		return registry.Location{}
	}
	setting := envRegion
	if env := strings.TrimSpace(opts.Env()(envRegion)); env != cfg.Region {
		setting = "region-id in --cloud-config"
	}
	return registry.Location{Name: cfg.Region, Kind: "region", Setting: setting}
}

// endpoint is the registration's Endpoint: the gateway, or its override.
func endpoint(opts registry.BuildOptions) registry.Endpoint {
	ep := registry.Endpoint{
		Host:        DefaultEndpoint,
		Setting:     "endpoint in --cloud-config (or " + envEndpoint + ")",
		Credentials: "access-key and secret-key (or access-key-file and secret-key-file) in --cloud-config, or " + envAccessKey + " and " + envSecretKey,
		IDs:         "--nodes (scaling group ids, scg-...)",
	}
	if cfg, err := LoadConfig(opts.CloudConfig, opts.Env()); err == nil && cfg.Endpoint != DefaultEndpoint {
		ep.Host, ep.Overridden = cfg.Endpoint, true
		if u, err := url.Parse(cfg.Endpoint); err == nil && u.Host != "" {
			ep.Host = u.Host
		}
	}
	return ep
}

// Validate reports every missing or bad field at once, one per line.
func (c Config) Validate() error {
	return cloudprovider.ConfigProblems(ProviderName, c.validate(nil))
}

// validate reports every problem but missing keys whose file setting is in
// skip: their unreadable file is reported already.
func (c Config) validate(skip map[string]bool) error {
	var errs []error
	if c.Region == "" {
		errs = append(errs, fmt.Errorf("region is not set: set region-id in [Global] or %s", envRegion))
	}
	if c.AccessKey == "" && !skip["access-key-file"] {
		errs = append(errs, fmt.Errorf("access key is not set: set access-key-file (a file holding it) or access-key in [Global], or %s", envAccessKey))
	}
	if c.SecretKey == "" && !skip["secret-key-file"] {
		errs = append(errs, fmt.Errorf("secret key is not set: set secret-key-file (a file holding it) or secret-key in [Global], or %s", envSecretKey))
	}
	if c.Endpoint == "" {
		errs = append(errs, errors.New("endpoint is empty"))
	}
	if c.Scheme != "" && c.Scheme != "https" && c.Scheme != "http" {
		errs = append(errs, fmt.Errorf("scheme %q: want https or http", c.Scheme))
	}
	return errors.Join(errs...)
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}
