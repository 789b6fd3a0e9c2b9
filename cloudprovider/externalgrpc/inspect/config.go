// Package inspect is the "inspect" subcommand: a client that connects to a
// running provider server the way the upstream Cluster Autoscaler's
// externalgrpc client does (same cloud-config file, same TLS rules, one
// deadline per call, no retries) and prints what CA would see.
//
// It is read-only unless --scale-up or --delete is given: those send the same
// NodeGroupIncreaseSize and NodeGroupDeleteNodes requests CA sends, so an
// operator can rehearse a scale-up against --simulate or check a real cloud
// before pointing CA at it.
package inspect

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc"
)

// DefaultTimeout is CA's default grpc_timeout: every RPC gets this deadline.
const DefaultTimeout = 5 * time.Second

// DefaultAddress is where the server listens by default.
const DefaultAddress = "127.0.0.1:8086"

// Connection says where the server is and how to reach it; it holds file
// paths only, never key material.
type Connection struct {
	// Address is host:port, [v6]:port or unix:///path, as in CA's cloud-config.
	Address string
	// CertFile and KeyFile are the client certificate and key (PEM). As in CA,
	// a certificate switches TLS on.
	CertFile, KeyFile string
	// CAFile verifies the server; it is the only trust root, as in CA.
	CAFile string
	// Timeout is the deadline of each call (CA's grpc_timeout).
	Timeout time.Duration
	// Tool names the command dialling ("inspect", "probe"); it is sent in
	// the user agent so the server's logs tell it from a Cluster Autoscaler.
	Tool string
}

// caCloudConfig is the YAML file CA reads for --cloud-provider=externalgrpc.
// CA ignores unknown keys, and so does this decoder.
type caCloudConfig struct {
	Address     string `yaml:"address"`
	Cert        string `yaml:"cert"`
	Key         string `yaml:"key"`
	CACert      string `yaml:"cacert"`
	GRPCTimeout string `yaml:"grpc_timeout"`
}

// LoadCloudConfig reads CA's externalgrpc cloud-config file.
func LoadCloudConfig(path string) (Connection, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Connection{}, fmt.Errorf("read cloud config: %w", err)
	}
	var c caCloudConfig
	if err := yaml.Unmarshal(data, &c); err != nil {
		return Connection{}, fmt.Errorf("cloud config %s: %w", path, err)
	}
	conn := Connection{Address: c.Address, CertFile: c.Cert, KeyFile: c.Key, CAFile: c.CACert, Timeout: DefaultTimeout}
	if c.GRPCTimeout != "" {
		d, err := time.ParseDuration(c.GRPCTimeout)
		if err != nil {
			return Connection{}, fmt.Errorf("cloud config %s: grpc_timeout: %w", path, err)
		}
		conn.Timeout = d
	}
	if conn.Address == "" {
		return Connection{}, fmt.Errorf("cloud config %s: address is required", path)
	}
	return conn, nil
}

// Validate checks the address the way CA does at start-up: it must pass
// net.SplitHostPort, so a bare socket path or dns:/// target is refused.
func (c Connection) Validate() error {
	var errs []error
	if _, _, err := net.SplitHostPort(c.Address); err != nil {
		errs = append(errs, fmt.Errorf("address %q: want host:port or unix:///path: %w", c.Address, err))
	}
	if c.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("timeout %s: must be positive (every call would fail at once)", c.Timeout))
	}
	if c.CertFile != "" && c.KeyFile == "" {
		errs = append(errs, errors.New("a client certificate needs its key (--tls-key-file or key:)"))
	}
	if c.KeyFile != "" && c.CertFile == "" {
		errs = append(errs, errors.New("a client key needs its certificate (--tls-cert-file or cert:)"))
	}
	return errors.Join(errs...)
}

// TLS reports whether the connection uses TLS: with a client certificate (as
// CA) or with only a CA bundle, for servers that do TLS without mTLS, which
// CA itself cannot talk to.
func (c Connection) TLS() bool { return c.CertFile != "" || c.CAFile != "" }

// tlsConfig mirrors CA's client: present the key pair, trust only the CA
// bundle, and expect the server certificate to name the address's host.
func (c Connection) tlsConfig() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if host, _, err := net.SplitHostPort(c.Address); err == nil {
		cfg.ServerName = host
	}
	if c.CertFile != "" {
		pair, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	if c.CAFile != "" {
		pem, err := os.ReadFile(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("server CA bundle: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("server CA bundle %s: no PEM certificates found", c.CAFile)
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

// target turns a CA address into a gRPC target. CA dials with the passthrough
// resolver, so host:port goes to the dialer unresolved; unix: targets use
// grpc-go's unix resolver, as they do in CA.
func (c Connection) target() string {
	if strings.HasPrefix(c.Address, "unix:") {
		return c.Address
	}
	return "passthrough:///" + c.Address
}

// Dial opens a client connection. Like CA's, it is lazy: a server that is down
// shows up as Unavailable on the first call, not here.
func (c Connection) Dial() (*grpc.ClientConn, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	creds := insecure.NewCredentials()
	if c.TLS() {
		cfg, err := c.tlsConfig()
		if err != nil {
			return nil, err
		}
		creds = credentials.NewTLS(cfg)
	}
	opts := []grpc.DialOption{grpc.WithTransportCredentials(creds)}
	if c.Tool != "" {
		opts = append(opts, grpc.WithUserAgent(externalgrpc.ToolUserAgentPrefix+c.Tool))
	}
	conn, err := grpc.NewClient(c.target(), opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", c.Address, err)
	}
	return conn, nil
}
