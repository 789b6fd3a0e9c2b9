package externalgrpc

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"strings"
)

// Address is a parsed --address value.
type Address struct {
	// Network is "tcp" or "unix".
	Network string
	// Addr is host:port for tcp, the socket path for unix.
	Addr string
}

// ParseAddress accepts "host:port", "[v6]:port", "unix:/path" and
// "unix:///path" (the two unix forms CA's client can dial).
func ParseAddress(s string) (Address, error) {
	if strings.HasPrefix(s, "unix:") {
		p := strings.TrimPrefix(s, "unix:")
		p = strings.TrimPrefix(p, "//")
		if !strings.HasPrefix(p, "/") {
			return Address{}, fmt.Errorf("--address %q: unix socket path must be absolute (unix:/path or unix:///path)", s)
		}
		return Address{Network: "unix", Addr: p}, nil
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return Address{}, fmt.Errorf("--address %q: want host:port or unix:/path: %v", s, err)
	}
	if port == "" {
		return Address{}, fmt.Errorf("--address %q: port is empty", s)
	}
	_ = host
	return Address{Network: "tcp", Addr: s}, nil
}

// Local reports whether only this machine (or pod) can reach the address:
// unix sockets and loopback hosts. Plaintext elsewhere needs --insecure.
func (a Address) Local() bool {
	if a.Network == "unix" {
		return true
	}
	host, _, _ := net.SplitHostPort(a.Addr)
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Listen opens the listener; a stale unix socket file is replaced.
func (a Address) Listen() (net.Listener, error) {
	if a.Network == "unix" {
		if fi, err := os.Lstat(a.Addr); err == nil && fi.Mode()&os.ModeSocket != 0 {
			_ = os.Remove(a.Addr)
		}
	}
	return net.Listen(a.Network, a.Addr)
}

// ServerTLSConfig loads the server key pair and, when clientCAFile is set,
// requires client certificates signed by it (mTLS).
func ServerTLSConfig(certFile, keyFile, clientCAFile string) (*tls.Config, error) {
	if certFile == "" && keyFile == "" {
		if clientCAFile != "" {
			return nil, fmt.Errorf("--tls-client-ca-file needs --tls-cert-file and --tls-key-file")
		}
		return nil, nil
	}
	if certFile == "" || keyFile == "" {
		return nil, fmt.Errorf("--tls-cert-file and --tls-key-file must be given together")
	}
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert-file/--tls-key-file: %v", err)
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{pair}, NextProtos: []string{"h2"}}
	if clientCAFile != "" {
		pem, err := os.ReadFile(clientCAFile)
		if err != nil {
			return nil, fmt.Errorf("--tls-client-ca-file: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--tls-client-ca-file %s: no PEM certificates found", clientCAFile)
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}
