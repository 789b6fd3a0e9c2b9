package exoscale

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	v3 "github.com/exoscale/egoscale/v3"
	"k8s.io/klog/v2"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/credential"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupconfig"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/registry"
)

var (
	zonePattern = regexp.MustCompile(`^[a-z]{2}-[a-z]{2,5}-[0-9]+$`)
	envPattern  = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
)

// Config is the provider configuration; APIKey and APISecret never print.
type Config struct {
	// APIKey and APISecret are the IAM key pair.
	APIKey    credential.Secret
	APISecret credential.Secret
	// APIKeyFile and APISecretFile, when set, hold the key pair and are
	// re-read when they change, so a rotated Secret needs no restart.
	APIKeyFile    string
	APISecretFile string
	// Zone is the Exoscale zone, e.g. "ch-gva-2" (EXOSCALE_ZONE).
	Zone string
	// Environment is the API environment (EXOSCALE_API_ENVIRONMENT, default "api").
	Environment string
	// Endpoint overrides the API base URL (EXOSCALE_API_ENDPOINT).
	Endpoint string
	// SKSCluster is an SKS cluster id or name whose nodepools are all groups.
	SKSCluster string
	// NodeGroupSpecs are the parsed --nodes values.
	NodeGroupSpecs []groupconfig.NodeGroupSpec
	// UnlimitedMaxSize caps groups without a spec when the quota is unlimited.
	UnlimitedMaxSize int
	// RefreshInterval is the minimum time between two cloud refreshes.
	RefreshInterval time.Duration
	// LearnPools is EXOSCALE_LEARN_POOLS.
	LearnPools bool
	// LearntPoolBounds are a learnt pool's bounds; nil: min 1, max the quota.
	LearntPoolBounds *Bounds
}

// Bounds are a node group's min and max.
type Bounds struct{ Min, Max int }

// String is "min:max".
func (b Bounds) String() string { return fmt.Sprintf("%d:%d", b.Min, b.Max) }

// parseBounds reads "min:max" with 0 <= min <= max and max >= 1.
func parseBounds(v string) (Bounds, bool) {
	lo, hi, ok := strings.Cut(strings.TrimSpace(v), ":")
	if !ok {
		return Bounds{}, false
	}
	minSize, err1 := strconv.Atoi(strings.TrimSpace(lo))
	maxSize, err2 := strconv.Atoi(strings.TrimSpace(hi))
	if err1 != nil || err2 != nil || minSize < 0 || maxSize < 1 || minSize > maxSize {
		return Bounds{}, false
	}
	return Bounds{Min: minSize, Max: maxSize}, true
}

// LoadConfig reads the configuration from getenv and opts, every problem at once.
func LoadConfig(opts registry.BuildOptions, getenv func(string) string) (Config, error) {
	cfg := Config{
		APIKey:           credential.Secret(strings.TrimSpace(getenv(EnvAPIKey))),
		APISecret:        credential.Secret(strings.TrimSpace(getenv(EnvAPISecret))),
		Zone:             strings.TrimSpace(getenv(EnvZone)),
		Environment:      strings.TrimSpace(getenv(EnvAPIEnvironment)),
		Endpoint:         strings.TrimSpace(getenv(EnvAPIEndpoint)),
		SKSCluster:       strings.TrimSpace(getenv(EnvSKSCluster)),
		UnlimitedMaxSize: defaultUnlimitedMaxSize,
		RefreshInterval:  defaultRefreshInterval,
		LearnPools:       true,
	}
	if cfg.Environment == "" {
		cfg.Environment = defaultAPIEnvironment
	}
	unreadable, errs := credential.ReadKeyFiles(
		credential.KeyFile{Value: &cfg.APIKey, Setting: EnvAPIKeyFile + "=", Path: strings.TrimSpace(getenv(EnvAPIKeyFile)), Read: &cfg.APIKeyFile},
		credential.KeyFile{Value: &cfg.APISecret, Setting: EnvAPISecretFile + "=", Path: strings.TrimSpace(getenv(EnvAPISecretFile)), Read: &cfg.APISecretFile},
	)
	if v := getenv(EnvUnlimitedMaxSize); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			errs = append(errs, fmt.Errorf("%s=%q: want a positive integer", EnvUnlimitedMaxSize, v))
		} else {
			cfg.UnlimitedMaxSize = n
		}
	}
	if v := getenv(EnvRefreshInterval); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			errs = append(errs, fmt.Errorf("%s=%q: want a duration such as 10s", EnvRefreshInterval, v))
		}
		cfg.RefreshInterval = d
	}
	if v := strings.TrimSpace(getenv(EnvLearnPools)); v != "" {
		if learn, err := strconv.ParseBool(v); err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: want true or false (false: only the nodepools of %s and the pools --nodes names are node groups)", EnvLearnPools, v, EnvSKSCluster))
		} else {
			cfg.LearnPools = learn
		}
	}
	if v := getenv(EnvLearntPoolBounds); v != "" {
		b, ok := parseBounds(v)
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("%s=%q: want min:max such as 1:10 (0 <= min <= max, max at least 1)", EnvLearntPoolBounds, v))
		case !cfg.LearnPools:
			errs = append(errs, fmt.Errorf("%s is set but %s=false learns no pools: drop one of them", EnvLearntPoolBounds, EnvLearnPools))
		default:
			cfg.LearntPoolBounds = &b
		}
	}
	if err := checkCloudConfig(opts.CloudConfig); err != nil {
		errs = append(errs, err)
	}
	specs, err := groupconfig.ParseNodeGroupSpecs(opts.NodeGroupSpecs)
	if err != nil {
		errs = append(errs, err)
	}
	cfg.NodeGroupSpecs = specs
	if len(opts.NodeGroupAutoDiscoverySpecs) > 0 {
		errs = append(errs, fmt.Errorf("--node-group-auto-discovery is not supported by the exoscale provider; set %s instead", EnvSKSCluster))
	}
	errs = append(errs, cfg.validate(unreadable))
	return cfg, cloudprovider.ConfigProblems(ProviderName, errs...)
}

// checkCloudConfig logs that --cloud-config is ignored, as the provider
// reads no file; a missing file is an error, since the path may be a typo.
func checkCloudConfig(path string) error {
	if path == "" {
		return nil
	}
	if _, err := os.Stat(path); err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("--cloud-config %s: %w; the Exoscale provider takes no configuration file (it reads %s, %s and %s from the environment): drop --cloud-config", path, err, EnvAPIKey, EnvAPISecret, EnvZone)
	}
	klog.InfoS("Ignoring --cloud-config: the Exoscale provider reads its configuration from environment variables only", "provider", ProviderName, "cloudConfig", path)
	return nil
}

// Validate checks the configuration and reports every problem, one per line.
func (c Config) Validate() error {
	return cloudprovider.ConfigProblems(ProviderName, c.validate(nil))
}

// validate reports every problem; a credential in skip is not reported missing.
func (c Config) validate(skip map[string]bool) error {
	var errs []error
	for _, v := range []struct{ name, file, value string }{{EnvAPIKey, EnvAPIKeyFile, c.APIKey.Reveal()}, {EnvAPISecret, EnvAPISecretFile, c.APISecret.Reveal()}} {
		if v.value == "" && !skip[v.file+"="] {
			errs = append(errs, cloudprovider.MissingCredential(v.name, v.file))
		}
	}
	if c.Zone == "" {
		errs = append(errs, fmt.Errorf("%s is not set: give the zone of your cluster, e.g. ch-gva-2", EnvZone))
	}
	if c.Zone != "" && !zonePattern.MatchString(c.Zone) {
		errs = append(errs, fmt.Errorf("%s=%q does not look like an Exoscale zone (e.g. ch-gva-2)", EnvZone, c.Zone))
	}
	if c.Environment != "" && !envPattern.MatchString(c.Environment) {
		errs = append(errs, fmt.Errorf("%s=%q: want lowercase letters, digits and dashes", EnvAPIEnvironment, c.Environment))
	}
	if c.Endpoint != "" {
		u, err := url.Parse(c.Endpoint)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
			errs = append(errs, fmt.Errorf("%s=%q: want an http(s) base URL such as https://api-ch-gva-2.exoscale.com/v2", EnvAPIEndpoint, c.Endpoint))
		}
	}
	if c.UnlimitedMaxSize < 1 {
		errs = append(errs, fmt.Errorf("unlimited max size must be at least 1, got %d", c.UnlimitedMaxSize))
	}
	return errors.Join(errs...)
}

// APIEndpoint returns the v2 base URL: the override, or the zone's.
func (c Config) APIEndpoint() string {
	if c.Endpoint != "" {
		return strings.TrimRight(c.Endpoint, "/")
	}
	return fmt.Sprintf(endpointFormat, c.Environment, c.Zone)
}

// String describes the configuration without its credentials.
func (c Config) String() string {
	specs := make([]string, len(c.NodeGroupSpecs))
	for i, s := range c.NodeGroupSpecs {
		specs[i] = s.String()
	}
	learnt := "off"
	switch {
	case c.LearnPools && c.LearntPoolBounds != nil:
		learnt = c.LearntPoolBounds.String()
	case c.LearnPools:
		learnt = "1:quota"
	}
	return fmt.Sprintf("exoscale.Config{zone: %q, endpoint: %q, sksCluster: %q, nodes: [%s], learntPools: %s, apiKey: %s, apiSecret: %s}",
		c.Zone, c.APIEndpoint(), c.SKSCluster, strings.Join(specs, " "), learnt, c.apiKey(), c.apiSecret())
}

// GoString keeps %#v from printing credentials.
func (c Config) GoString() string { return c.String() }

func (c Config) apiKey() *credential.Credential {
	return credential.CredentialFrom(c.APIKey, EnvAPIKeyFile+"=", c.APIKeyFile)
}

func (c Config) apiSecret() *credential.Credential {
	return credential.CredentialFrom(c.APISecret, EnvAPISecretFile+"=", c.APISecretFile)
}

// publishedZones are egoscale v3's zone names. Preflight checks
// EXOSCALE_ZONE against them without a call and only warns on another zone.
var publishedZones = []v3.ZoneName{
	v3.ZoneNameCHGva2, v3.ZoneNameCHDk2, v3.ZoneNameDEFra1, v3.ZoneNameDEMuc1,
	v3.ZoneNameATVie1, v3.ZoneNameATVie2, v3.ZoneNameBGSof1, v3.ZoneNameHrZag1,
}

// zoneLocation is the registration's Location: EXOSCALE_ZONE, published zones.
func zoneLocation(opts registry.BuildOptions) registry.Location {
	loc := registry.Location{Name: strings.TrimSpace(opts.Env()(EnvZone)), Kind: "zone", Setting: EnvZone}
	for _, z := range publishedZones {
		loc.Published = append(loc.Published, string(z))
	}
	return loc
}

// endpoint is the registration's Endpoint: the zone's host or the override.
func endpoint(opts registry.BuildOptions) registry.Endpoint {
	getenv := opts.Env()
	c := Config{
		Zone:        strings.TrimSpace(getenv(EnvZone)),
		Environment: strings.TrimSpace(getenv(EnvAPIEnvironment)),
		Endpoint:    strings.TrimSpace(getenv(EnvAPIEndpoint)),
	}
	if c.Environment == "" {
		c.Environment = defaultAPIEnvironment
	}
	host := c.APIEndpoint()
	if u, err := url.Parse(host); err == nil && u.Host != "" {
		host = u.Host
	}
	return registry.Endpoint{
		Host:        host,
		Setting:     EnvAPIEndpoint,
		Overridden:  c.Endpoint != "",
		ByLocation:  true,
		Credentials: EnvAPIKey + " and " + EnvAPISecret + " (or their _FILE files)",
		IDs:         EnvSKSCluster + " and --nodes",
	}
}
