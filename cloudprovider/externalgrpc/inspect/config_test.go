package inspect

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadCloudConfig(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name    string
		content string
		want    Connection
		wantErr string
	}{
		{"full", "address: \"10.0.0.1:8086\"\ncert: /c.pem\nkey: /k.pem\ncacert: /ca.pem\ngrpc_timeout: 10s\n",
			Connection{Address: "10.0.0.1:8086", CertFile: "/c.pem", KeyFile: "/k.pem", CAFile: "/ca.pem", Timeout: 10 * time.Second}, ""},
		{"defaults and unknown keys ignored", "# CA's file\naddress: localhost:8086\nextra: 1\n",
			Connection{Address: "localhost:8086", Timeout: 5 * time.Second}, ""},
		{"unix socket", "address: unix:///run/cap.sock\n", Connection{Address: "unix:///run/cap.sock", Timeout: 5 * time.Second}, ""},
		{"no address", "cert: /c.pem\n", Connection{}, "address is required"},
		{"bare number timeout", "address: a:1\ngrpc_timeout: 10\n", Connection{}, "grpc_timeout"},
		{"not yaml", "address: [\n", Connection{}, "cloud config"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := LoadCloudConfig(writeFile(t, dir, "c.yaml", tc.content))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
	if _, err := LoadCloudConfig(filepath.Join(dir, "missing.yaml")); err == nil {
		t.Fatal("missing file accepted")
	}
}

func TestConnectionValidate(t *testing.T) {
	cases := []struct {
		name string
		conn Connection
		ok   bool
	}{
		{"host:port", Connection{Address: "127.0.0.1:8086", Timeout: time.Second}, true},
		{"unix triple slash", Connection{Address: "unix:///run/x.sock", Timeout: time.Second}, true},
		{"bare path is refused like CA", Connection{Address: "/run/x.sock", Timeout: time.Second}, false},
		{"dns target is refused like CA", Connection{Address: "dns:///host:1", Timeout: time.Second}, false},
		{"zero timeout", Connection{Address: "a:1"}, false},
		{"cert without key", Connection{Address: "a:1", Timeout: time.Second, CertFile: "c"}, false},
		{"key without cert", Connection{Address: "a:1", Timeout: time.Second, KeyFile: "k"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.conn.Validate(); (err == nil) != tc.ok {
				t.Fatalf("Validate() = %v, want ok=%t", err, tc.ok)
			}
		})
	}
}

func TestFlagsOverrideCloudConfig(t *testing.T) {
	p := newFakeProvider()
	addr := serve(t, p, nil, nil)
	cfg := writeFile(t, t.TempDir(), "ca.yaml", "address: 127.0.0.1:1\ngrpc_timeout: 3s\n")
	if code, _, stderr := inspectRun(t, "--cloud-config", cfg, "--address", addr); code != 0 {
		t.Fatalf("--address should override the file: exit %d %s", code, stderr)
	}
	if code, _, stderr := inspectRun(t, "--cloud-config", cfg); code != 1 || !strings.Contains(stderr, "127.0.0.1:1") {
		t.Fatalf("the file's address should be used: exit %d %s", code, stderr)
	}
}

func TestUnixSocket(t *testing.T) {
	dir, err := os.MkdirTemp("", "insp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	serve(t, newFakeProvider(), nil, lis)
	if code, out, stderr := inspectRun(t, "--address", "unix://"+sock); code != 0 || !strings.Contains(out, "workers") {
		t.Fatalf("exit %d out %q stderr %q", code, out, stderr)
	}
}

// pki is a throwaway CA with a server certificate for 127.0.0.1 and a client certificate.
type pki struct {
	caFile, serverCert, serverKey, clientCert, clientKey string
	pool                                                 *x509.CertPool
}

func newPKI(t *testing.T) pki {
	t.Helper()
	dir := t.TempDir()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	issue := func(name string, serial int64, usage x509.ExtKeyUsage, ips []net.IP) (string, string) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name}, NotBefore: time.Now().Add(-time.Hour),
			NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: ips, KeyUsage: x509.KeyUsageDigitalSignature}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kb, _ := x509.MarshalECPrivateKey(key)
		return writeFile(t, dir, name+".crt", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))),
			writeFile(t, dir, name+".key", string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})))
	}
	p := pki{caFile: writeFile(t, dir, "ca.crt", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}))), pool: x509.NewCertPool()}
	p.pool.AddCert(ca)
	p.serverCert, p.serverKey = issue("server", 2, x509.ExtKeyUsageServerAuth, []net.IP{net.ParseIP("127.0.0.1")})
	p.clientCert, p.clientKey = issue("client", 3, x509.ExtKeyUsageClientAuth, nil)
	return p
}

func TestMTLS(t *testing.T) {
	ca := newPKI(t)
	pair, err := tls.LoadX509KeyPair(ca.serverCert, ca.serverKey)
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, newFakeProvider(), &tls.Config{Certificates: []tls.Certificate{pair}, ClientCAs: ca.pool,
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}, nil)
	dir := t.TempDir()
	cases := []struct {
		name string
		args []string
		ok   bool
	}{
		{"CA's cloud-config with cert, key and cacert", []string{"--cloud-config", writeFile(t, dir, "ok.yaml",
			"address: "+addr+"\ncert: "+ca.clientCert+"\nkey: "+ca.clientKey+"\ncacert: "+ca.caFile+"\n")}, true},
		{"the same with flags", []string{"--address", addr, "--tls-cert-file", ca.clientCert, "--tls-key-file", ca.clientKey, "--tls-ca-file", ca.caFile}, true},
		{"no client certificate", []string{"--address", addr, "--tls-ca-file", ca.caFile}, false},
		{"plaintext against TLS", []string{"--address", addr}, false},
		{"server not trusted", []string{"--address", addr, "--tls-cert-file", ca.clientCert, "--tls-key-file", ca.clientKey, "--tls-ca-file", ca.clientCert}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := inspectRun(t, append(tc.args, "--timeout", "2s")...)
			if tc.ok && (code != 0 || !strings.Contains(out, "workers")) {
				t.Fatalf("exit %d stderr %q", code, stderr)
			}
			if !tc.ok && code == 0 {
				t.Fatalf("connected without valid credentials: %s", out)
			}
		})
	}
}
