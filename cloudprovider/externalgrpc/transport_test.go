package externalgrpc

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
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/cloudprovidertest"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/externalgrpc/protos"
	"github.com/ca-providers/cluster-autoscaler-provider/cloudprovider/groupstate"
)

type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue returns PEM cert and key for a leaf with the given usage.
func (ca *testCA) issue(t *testing.T, cn string, usage x509.ExtKeyUsage) ([]byte, []byte) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

func write(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestMutualTLS: the client CA's way (cert + key + cacert, ServerName = host of
// address) works only with a client certificate signed by our client CA.
func TestMutualTLS(t *testing.T) {
	dir := t.TempDir()
	serverCA, clientCA, rogueCA := newCA(t, "server-ca"), newCA(t, "client-ca"), newCA(t, "rogue-ca")
	sc, sk := serverCA.issue(t, "provider", x509.ExtKeyUsageServerAuth)
	tlsCfg, err := ServerTLSConfig(write(t, dir, "s.crt", sc), write(t, dir, "s.key", sk), write(t, dir, "client-ca.crt", clientCA.pem))
	if err != nil {
		t.Fatal(err)
	}
	lisAddr := serverAddr(t, tlsCfg)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(serverCA.pem)
	dial := func(clientCert *tls.Certificate) error {
		cfg := &tls.Config{RootCAs: roots, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
		if clientCert != nil {
			cfg.Certificates = []tls.Certificate{*clientCert}
		}
		conn, err := grpc.NewClient(lisAddr, grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
		if err != nil {
			return err
		}
		defer conn.Close()
		_, err = protos.NewCloudProviderClient(conn).NodeGroups(rpcCtx(t), &protos.NodeGroupsRequest{})
		return err
	}
	pair := func(ca *testCA) *tls.Certificate {
		cc, ck := ca.issue(t, "cluster-autoscaler", x509.ExtKeyUsageClientAuth)
		p, err := tls.X509KeyPair(cc, ck)
		if err != nil {
			t.Fatal(err)
		}
		return &p
	}
	if err := dial(nil); err == nil {
		t.Fatal("a client without a certificate was served")
	}
	if err := dial(pair(rogueCA)); err == nil {
		t.Fatal("a client certificate from another CA was accepted")
	}
	if err := dial(pair(clientCA)); err != nil {
		t.Fatalf("a client certificate from our client CA was refused: %v", err)
	}
}

// serverAddr starts a second TLS server with cfg and returns its address.
func serverAddr(t *testing.T, cfg *tls.Config) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer(grpc.Creds(credentials.NewTLS(cfg)))
	protos.RegisterCloudProviderServer(gs, NewServer(cloudprovidertest.SeededProvider(t, groupstate.GuardOptions{}), Options{}))
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)
	return lis.Addr().String()
}

func TestServerTLSConfigErrors(t *testing.T) {
	dir := t.TempDir()
	garbage := write(t, dir, "garbage.pem", []byte("not pem"))
	ca := newCA(t, "ca")
	sc, sk := ca.issue(t, "s", x509.ExtKeyUsageServerAuth)
	crt, key := write(t, dir, "s.crt", sc), write(t, dir, "s.key", sk)
	cases := []struct{ name, cert, key, ca string }{
		{"missing cert file", filepath.Join(dir, "nope.crt"), key, ""},
		{"cert without key", crt, "", ""},
		{"client CA without server cert", "", "", crt},
		{"garbage client CA", crt, key, garbage},
		{"unreadable client CA", crt, key, filepath.Join(dir, "nope.ca")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ServerTLSConfig(tc.cert, tc.key, tc.ca); err == nil {
				t.Fatal("want an error")
			}
		})
	}
	if cfg, err := ServerTLSConfig("", "", ""); cfg != nil || err != nil {
		t.Fatalf("no TLS files: %v %v, want plaintext", cfg, err)
	}
}

// TestServerCertificateRotation: a renewed certificate (as cert-manager writes
// it) is served to new connections without a restart.
func TestServerCertificateRotation(t *testing.T) {
	dir := t.TempDir()
	oldCA, newCA := newCA(t, "old"), newCA(t, "new")
	c1, k1 := oldCA.issue(t, "provider", x509.ExtKeyUsageServerAuth)
	crt, key := write(t, dir, "s.crt", c1), write(t, dir, "s.key", k1)
	cfg, err := ServerTLSConfig(crt, key, "")
	if err != nil {
		t.Fatal(err)
	}
	addr := serverAddr(t, cfg)
	trusts := func(ca *testCA) error {
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(ca.pem)
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: roots, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12})))
		if err != nil {
			return err
		}
		defer conn.Close()
		_, err = protos.NewCloudProviderClient(conn).NodeGroups(rpcCtx(t), &protos.NodeGroupsRequest{})
		return err
	}
	if err := trusts(oldCA); err != nil {
		t.Fatalf("initial certificate: %v", err)
	}
	c2, k2 := newCA.issue(t, "provider", x509.ExtKeyUsageServerAuth)
	write(t, dir, "s.crt", c2)
	write(t, dir, "s.key", k2)
	later := time.Now().Add(time.Minute)
	for _, f := range []string{crt, key} {
		if err := os.Chtimes(f, later, later); err != nil {
			t.Fatal(err)
		}
	}
	if err := trusts(newCA); err != nil {
		t.Fatalf("renewed certificate not served: %v", err)
	}
	if err := trusts(oldCA); err == nil {
		t.Fatal("the old certificate is still served after renewal")
	}
	// A broken renewal keeps the last good pair.
	write(t, dir, "s.crt", []byte("garbage"))
	if err := os.Chtimes(crt, later.Add(time.Minute), later.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := trusts(newCA); err != nil {
		t.Fatalf("a broken renewal dropped the working certificate: %v", err)
	}
}
