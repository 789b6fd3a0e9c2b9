package externalgrpc

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"

	"k8s.io/klog/v2"
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
// requires client certificates signed by it (mTLS). The files are re-read when
// they change, so certificates renewed by cert-manager are picked up without a
// restart; a renewal that fails to load keeps the previous material.
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
	r := &tlsFiles{certFile: certFile, keyFile: keyFile, caFile: clientCAFile}
	if err := r.reload(); err != nil {
		return nil, err
	}
	base := &tls.Config{MinVersion: tls.VersionTLS12, NextProtos: []string{"h2"}}
	if clientCAFile != "" {
		base.ClientAuth = tls.RequireAndVerifyClientCert
	}
	cfg := base.Clone()
	cfg.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		if err := r.reload(); err != nil {
			klog.ErrorS(err, "Reloading TLS files failed, keeping the previous certificates")
		}
		c := base.Clone()
		r.mu.Lock()
		c.Certificates = []tls.Certificate{*r.cert}
		c.ClientCAs = r.pool
		r.mu.Unlock()
		return c, nil
	}
	return cfg, nil
}

// tlsFiles holds the server's TLS material and reloads it when a file's
// modification time changes.
type tlsFiles struct {
	certFile, keyFile, caFile string

	mu    sync.Mutex
	stamp string
	cert  *tls.Certificate
	pool  *x509.CertPool
}

func (r *tlsFiles) reload() error {
	stamp := ""
	for _, f := range []struct{ flag, path string }{
		{"--tls-cert-file", r.certFile}, {"--tls-key-file", r.keyFile}, {"--tls-client-ca-file", r.caFile},
	} {
		if f.path == "" {
			continue
		}
		fi, err := os.Stat(f.path)
		if err != nil {
			return fmt.Errorf("%s: %v", f.flag, err)
		}
		stamp += fmt.Sprintf("%s:%d:%d;", f.path, fi.ModTime().UnixNano(), fi.Size())
	}
	r.mu.Lock()
	unchanged := stamp == r.stamp
	r.mu.Unlock()
	if unchanged {
		return nil
	}
	pair, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		return fmt.Errorf("--tls-cert-file/--tls-key-file: %v", err)
	}
	var pool *x509.CertPool
	if r.caFile != "" {
		pem, err := os.ReadFile(r.caFile)
		if err != nil {
			return fmt.Errorf("--tls-client-ca-file: %v", err)
		}
		pool = x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("--tls-client-ca-file %s: no PEM certificates found", r.caFile)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stamp, r.cert, r.pool = stamp, &pair, pool
	return nil
}
