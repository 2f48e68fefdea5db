package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testCert is a certificate and its key, PEM-encoded, signed by parent
// (self-signed when parent is nil).
type testCert struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	certPEM []byte
	keyPEM  []byte
}

func newTestCert(t *testing.T, cn string, ca bool, parent *testCert) *testCert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, BasicConstraintsValid: true, IsCA: ca,
	}
	signer, signerKey := tmpl, key
	if parent != nil {
		signer, signerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	kder, _ := x509.MarshalECPrivateKey(key)
	return &testCert{cert: cert, key: key,
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})}
}

func (c *testCert) tlsCert(t *testing.T) tls.Certificate {
	t.Helper()
	tc, err := tls.X509KeyPair(c.certPEM, c.keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return tc
}

// webServe serves a mux answering "ok" on / with web on loopback.
func webServe(t *testing.T, web *webConfig) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	srv, ln := newHTTPServer(mux, ln, defaultHTTPLimits, web)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

func writeFiles(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// A TLS client certificate, as exporter-toolkit's web config asks for it:
// one signed by client_ca_file is served; none, or one signed by another
// CA, is refused in the handshake.
func TestServeWebConfigClientCertificates(t *testing.T) {
	dir := t.TempDir()
	serverCA := newTestCert(t, "server CA", true, nil)
	server := newTestCert(t, "127.0.0.1", false, serverCA)
	clientCA := newTestCert(t, "clients CA", true, nil)
	prom := newTestCert(t, "prometheus", false, clientCA)
	stranger := newTestCert(t, "stranger", false, newTestCert(t, "other CA", true, nil))
	writeFiles(t, dir, map[string][]byte{"server.crt": server.certPEM, "server.key": server.keyPEM, "clients.crt": clientCA.certPEM,
		"web.yml": []byte("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: clients.crt\n  min_version: TLS12\n")})
	web, err := loadWebConfig(filepath.Join(dir, "web.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if !web.authenticated() || web.scheme() != "https" {
		t.Errorf("authenticated %v, scheme %s; want true, https", web.authenticated(), web.scheme())
	}
	addr := webServe(t, web)
	roots := x509.NewCertPool()
	roots.AddCert(serverCA.cert)
	get := func(certs []tls.Certificate) (string, error) {
		c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: certs}}}
		resp, err := c.Get("https://" + addr + "/")
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	if body, err := get([]tls.Certificate{prom.tlsCert(t)}); err != nil || body != "ok" {
		t.Errorf("with the client certificate: %q %v, want ok", body, err)
	}
	if body, err := get(nil); err == nil {
		t.Errorf("without a client certificate: answered %q", body)
	}
	if body, err := get([]tls.Certificate{stranger.tlsCert(t)}); err == nil {
		t.Errorf("with a certificate of another CA: answered %q", body)
	}
	// Plain HTTP on the TLS port is not served either.
	if resp, err := http.Get("http://" + addr + "/"); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) == "ok" {
			t.Error("plain HTTP answered on the TLS port")
		}
	}
}

func TestServeWebConfigBasicAuth(t *testing.T) {
	sum := sha256.Sum256([]byte("correct horse"))
	web, err := parseWebConfig("web.yml", []byte("basic_auth_users:\n  prom: \"{sha256}"+hex.EncodeToString(sum[:])+"\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	addr := webServe(t, web)
	for _, tc := range []struct {
		name       string
		user, pass string
		want       int
	}{
		{"no credentials", "", "", 401},
		{"wrong password", "prom", "correct horse ", 401},
		{"unknown user", "grafana", "correct horse", 401},
		{"right", "prom", "correct horse", 200},
	} {
		req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
		if tc.user != "" {
			req.SetBasicAuth(tc.user, tc.pass)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want || (tc.want == 200) != (string(b) == "ok") {
			t.Errorf("%s: %d %q, want %d", tc.name, resp.StatusCode, b, tc.want)
		}
		if tc.want == 401 && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic ") {
			t.Errorf("%s: WWW-Authenticate %q", tc.name, resp.Header.Get("WWW-Authenticate"))
		}
	}
}

func TestServeWebConfigErrors(t *testing.T) {
	dir := t.TempDir()
	ca := newTestCert(t, "ca", true, nil)
	srv := newTestCert(t, "127.0.0.1", false, ca)
	writeFiles(t, dir, map[string][]byte{"s.crt": srv.certPEM, "s.key": srv.keyPEM, "ca.crt": ca.certPEM, "junk.crt": []byte("not PEM\n")})
	tlsHead := "tls_server_config:\n  cert_file: s.crt\n  key_file: s.key\n"
	for _, tc := range []struct {
		name, text, want string
	}{
		{"empty", "", ":1: empty file"},
		{"unknown top key", "http_server_config:\n  http2: false\n", ":1: "},
		{"unknown tls key", tlsHead + "  cipher_suites: [TLS_AES_128_GCM_SHA256]\n", `:4: unknown key "cipher_suites"`},
		{"bcrypt", "basic_auth_users:\n  prom: $2y$10$abcdefghijklmnopqrstuv\n", ":2: basic_auth_users.prom: a bcrypt hash: linecheck does not link golang.org/x/crypto"},
		{"bad hash", "basic_auth_users:\n  prom: \"{sha256}abc\"\n", `:2: basic_auth_users.prom: want "{sha256}" followed by the 64 hex digits`},
		{"plain password", "basic_auth_users:\n  prom: secret\n", `:2: basic_auth_users.prom: want "{sha256}"`},
		{"no cert", "tls_server_config:\n  key_file: s.key\n", ":2: tls_server_config.cert_file: required"},
		{"missing cert file", "tls_server_config:\n  cert_file: nope.crt\n  key_file: s.key\n", ":2: tls_server_config.cert_file: open "},
		{"verify without CA", tlsHead + "  client_auth_type: RequireAndVerifyClientCert\n", ":2: tls_server_config.client_ca_file: required with client_auth_type RequireAndVerifyClientCert"},
		{"CA without verify", tlsHead + "  client_ca_file: ca.crt\n", ":4: tls_server_config.client_ca_file: given, but client_auth_type"},
		{"CA not PEM", tlsHead + "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: junk.crt\n", ":5: tls_server_config.client_ca_file: " + filepath.Join(dir, "junk.crt") + " holds no PEM certificate"},
		{"bad auth type", tlsHead + "  client_auth_type: Always\n", `:4: tls_server_config.client_auth_type: "Always": use NoClientCert`},
		{"bad version", tlsHead + "  min_version: TLS14\n", `:4: tls_server_config.min_version: "TLS14"`},
		{"neither", "basic_auth_users: {}\n", ":1: neither tls_server_config nor basic_auth_users"},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".yml")
		writeFiles(t, dir, map[string][]byte{filepath.Base(path): []byte(tc.text)})
		_, err := loadWebConfig(path)
		if err == nil || !strings.Contains(err.Error(), path+tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, path+tc.want)
		}
	}
}

// serve itself: a bad web config is bad input (exit 2, nothing listens);
// with basic auth every page asks for the password; the warning on a
// non-loopback address says how to protect it, and what protects it.
func TestServeWebConfigEndToEnd(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	sum := sha256.Sum256([]byte("pw"))
	writeFiles(t, dir, map[string][]byte{"c.yaml": []byte("candidates:\n  - name: lo\n    targets: [{addr: 127.0.0.1, protocol: tcp, port: 9}]\n"),
		"bad.yml":  []byte("basic_auth_users:\n  prom: $2b$12$xxxxxxxxxxxxxxxxxxxxxx\n"),
		"auth.yml": []byte("basic_auth_users:\n  prom: \"{sha256}" + hex.EncodeToString(sum[:]) + "\"\n")})
	code, stderr := runLinecheckCode(t, "serve", "--config", cfg, "--listen", "127.0.0.1:0", "--web.config.file", filepath.Join(dir, "bad.yml"))
	if code != 2 || !strings.Contains(stderr, filepath.Join(dir, "bad.yml")+":2: basic_auth_users.prom: a bcrypt hash") {
		t.Errorf("bad web config: exit %d, %q", code, stderr)
	}
	_, _, listen := startServe(t, "--config", cfg, "--web.config.file", filepath.Join(dir, "auth.yml"), "--count", "1", "--trace-every", "0")
	for _, path := range []string{"/", "/compare", "/metrics"} {
		if code, _ := get(t, "http://"+listen+path); code != 401 {
			t.Errorf("%s without the password: %d, want 401", path, code)
		}
		req, _ := http.NewRequest("GET", "http://"+listen+path, nil)
		req.SetBasicAuth("prom", "pw")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s with the password: %d", path, resp.StatusCode)
		}
	}

	wide := &net.TCPAddr{IP: net.ParseIP("10.0.0.5"), Port: 9427}
	web, _ := parseWebConfig("auth.yml", []byte("basic_auth_users:\n  prom: \"{sha256}"+hex.EncodeToString(sum[:])+"\"\n"))
	if w := exposureWarning(wide, web); strings.Contains(w, "warning") || !strings.Contains(w, "need a basic_auth_users password") || !strings.Contains(w, "in the clear") {
		t.Errorf("with basic auth: %q", w)
	}
	if w := exposureWarning(wide, nil); !strings.Contains(w, "warning") || !strings.Contains(w, "--web.config.file") || !strings.Contains(w, "prices") {
		t.Errorf("without: %q", w)
	}
}
