package main

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/linecheck/linecheck/yamlmsg"
)

// serveWebHelp is the part of serve --help about --web.config.file.
const serveWebHelp = `

--web.config.file FILE takes the web configuration file of Prometheus's
exporters (exporter-toolkit's format, docs/scaleout.md), read once at
start, before serve switches to --user:
  tls_server_config:
    cert_file: serve.crt        # PEM; paths are relative to FILE
    key_file: serve.key
    client_auth_type: RequireAndVerifyClientCert   # or NoClientCert (default),
    client_ca_file: clients-ca.crt                 # RequestClientCert, RequireAnyClientCert,
    min_version: TLS12                             # VerifyClientCertIfGiven
  basic_auth_users:
    prometheus: "{sha256}<hex SHA-256 of the password>"   # printf %s PASSWORD | sha256sum
Basic auth takes {sha256} hashes only: bcrypt needs golang.org/x/crypto,
which linecheck does not link, so a bcrypt hash is refused. The hash is
unsalted: use a long random password (openssl rand -hex 16). Every
endpoint asks for it; a client certificate is verified in the TLS handshake.`

// webConfig is what --web.config.file sets up on serve's HTTP side.
type webConfig struct {
	tls   *tls.Config         // nil: plain HTTP
	users map[string][32]byte // basic auth: the SHA-256 of each user's password; empty: none
}

// authenticated tells whether a client must prove who it is: a basic-auth
// password, or a client certificate that verifies against client_ca_file.
func (w *webConfig) authenticated() bool {
	return w != nil && (len(w.users) > 0 || w.tls != nil && w.tls.ClientAuth == tls.RequireAndVerifyClientCert)
}

// scheme is the URL scheme serve answers on.
func (w *webConfig) scheme() string {
	if w != nil && w.tls != nil {
		return "https"
	}
	return "http"
}

// rawWebConfig is the file, keys as exporter-toolkit spells them.
type rawWebConfig struct {
	TLS   yaml.Node `yaml:"tls_server_config"`
	Users yaml.Node `yaml:"basic_auth_users"`
}

type rawTLS struct {
	CertFile       string `yaml:"cert_file"`
	KeyFile        string `yaml:"key_file"`
	ClientAuthType string `yaml:"client_auth_type"`
	ClientCAFile   string `yaml:"client_ca_file"`
	MinVersion     string `yaml:"min_version"`
	MaxVersion     string `yaml:"max_version"`
}

var clientAuthTypes = map[string]tls.ClientAuthType{
	"":                           tls.NoClientCert,
	"NoClientCert":               tls.NoClientCert,
	"RequestClientCert":          tls.RequestClientCert,
	"RequireAnyClientCert":       tls.RequireAnyClientCert,
	"VerifyClientCertIfGiven":    tls.VerifyClientCertIfGiven,
	"RequireAndVerifyClientCert": tls.RequireAndVerifyClientCert,
}

var tlsVersions = map[string]uint16{"TLS10": tls.VersionTLS10, "TLS11": tls.VersionTLS11, "TLS12": tls.VersionTLS12, "TLS13": tls.VersionTLS13}

// loadWebConfig reads --web.config.file; nil for "". Errors name the file
// and line.
func loadWebConfig(path string) (*webConfig, error) {
	if path == "" {
		return nil, nil
	}
	b, err := yamlmsg.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--web.config.file: %w", err)
	}
	return parseWebConfig(path, b)
}

func parseWebConfig(path string, b []byte) (*webConfig, error) {
	var raw rawWebConfig
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&raw); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s:1: empty file: want tls_server_config: and/or basic_auth_users: (docs/scaleout.md)", path)
		}
		return nil, yamlmsg.FileError(path, err)
	}
	errf := func(line int, format string, a ...any) error {
		return fmt.Errorf("%s:%d: %s", path, line, fmt.Sprintf(format, a...))
	}
	w := &webConfig{users: map[string][32]byte{}}
	if raw.TLS.Kind != 0 {
		var t rawTLS
		if err := yamlmsg.DecodeStrict(&raw.TLS, &t); err != nil {
			return nil, yamlmsg.FileError(path, err)
		}
		cfg, err := tlsConfigOf(t, filepath.Dir(path), func(key, format string, a ...any) error {
			return errf(keyLine(&raw.TLS, key), "tls_server_config.%s: %s", key, fmt.Sprintf(format, a...))
		})
		if err != nil {
			return nil, err
		}
		w.tls = cfg
	}
	if raw.Users.Kind != 0 {
		if raw.Users.Kind != yaml.MappingNode {
			return nil, errf(raw.Users.Line, "basic_auth_users: want a mapping of user: \"{sha256}<hex>\"")
		}
		for i := 0; i+1 < len(raw.Users.Content); i += 2 {
			k, v := raw.Users.Content[i], raw.Users.Content[i+1]
			if k.Value == "" || strings.Contains(k.Value, ":") {
				return nil, errf(k.Line, "basic_auth_users: user %q: a name must be non-empty and without ':'", k.Value)
			}
			sum, err := passwordHash(v.Value)
			if err != nil {
				return nil, errf(v.Line, "basic_auth_users.%s: %v", k.Value, err)
			}
			w.users[k.Value] = sum
		}
	}
	if w.tls == nil && len(w.users) == 0 {
		return nil, errf(1, "neither tls_server_config nor basic_auth_users: give one (docs/scaleout.md), or leave --web.config.file out")
	}
	return w, nil
}

// passwordHash reads a basic_auth_users value: "{sha256}" and 64 hex digits.
func passwordHash(v string) ([32]byte, error) {
	var sum [32]byte
	if strings.HasPrefix(v, "$2") {
		return sum, errors.New("a bcrypt hash: linecheck does not link golang.org/x/crypto, which bcrypt needs; give \"{sha256}\" followed by the hex SHA-256 of the password (printf %s PASSWORD | sha256sum)")
	}
	hexSum, ok := strings.CutPrefix(v, "{sha256}")
	b, err := hex.DecodeString(hexSum)
	if !ok || err != nil || len(b) != len(sum) {
		return sum, errors.New("want \"{sha256}\" followed by the 64 hex digits of the password's SHA-256 (printf %s PASSWORD | sha256sum)")
	}
	copy(sum[:], b)
	return sum, nil
}

// tlsConfigOf builds the server's TLS configuration; files are read now,
// relative to dir. bad makes an error about one key.
func tlsConfigOf(t rawTLS, dir string, bad func(key, format string, a ...any) error) (*tls.Config, error) {
	rel := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	switch {
	case t.CertFile == "":
		return nil, bad("cert_file", "required: the server's certificate (PEM)")
	case t.KeyFile == "":
		return nil, bad("key_file", "required: the server's private key (PEM)")
	}
	cert, err := tls.LoadX509KeyPair(rel(t.CertFile), rel(t.KeyFile))
	if err != nil {
		return nil, bad("cert_file", "%v", err)
	}
	auth, ok := clientAuthTypes[t.ClientAuthType]
	if !ok {
		return nil, bad("client_auth_type", "%q: use NoClientCert, RequestClientCert, RequireAnyClientCert, VerifyClientCertIfGiven or RequireAndVerifyClientCert", t.ClientAuthType)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: auth, MinVersion: tls.VersionTLS12,
		NextProtos: []string{"http/1.1"}}
	for _, v := range []struct {
		key, value string
		dst        *uint16
	}{{"min_version", t.MinVersion, &cfg.MinVersion}, {"max_version", t.MaxVersion, &cfg.MaxVersion}} {
		if v.value == "" {
			continue
		}
		n, ok := tlsVersions[v.value]
		if !ok {
			return nil, bad(v.key, "%q: use TLS10, TLS11, TLS12 or TLS13", v.value)
		}
		*v.dst = n
	}
	verifies := auth == tls.VerifyClientCertIfGiven || auth == tls.RequireAndVerifyClientCert
	switch {
	case t.ClientCAFile == "" && verifies:
		return nil, bad("client_ca_file", "required with client_auth_type %s: the CA certificates (PEM) client certificates must verify against", t.ClientAuthType)
	case t.ClientCAFile != "" && !verifies:
		return nil, bad("client_ca_file", "given, but client_auth_type %q verifies no client certificate: use RequireAndVerifyClientCert", t.ClientAuthType)
	case t.ClientCAFile != "":
		pem, err := os.ReadFile(rel(t.ClientCAFile))
		if err != nil {
			return nil, bad("client_ca_file", "%v", err)
		}
		cfg.ClientCAs = x509.NewCertPool()
		if !cfg.ClientCAs.AppendCertsFromPEM(pem) {
			return nil, bad("client_ca_file", "%s holds no PEM certificate", rel(t.ClientCAFile))
		}
	}
	return cfg, nil
}

// keyLine is the line of key in mapping n (n's own line without it).
func keyLine(n *yaml.Node, key string) int {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i].Line
		}
	}
	return n.Line
}

// requireAuth wraps h with basic auth when users are configured. An
// unknown user costs the same comparison as a known one.
func (w *webConfig) requireAuth(h http.Handler) http.Handler {
	if w == nil || len(w.users) == 0 {
		return h
	}
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if user, pass, ok := r.BasicAuth(); ok {
			want, known := w.users[user]
			got := sha256.Sum256([]byte(pass))
			if subtle.ConstantTimeCompare(got[:], want[:]) == 1 && known {
				h.ServeHTTP(rw, r)
				return
			}
		}
		rw.Header().Set("WWW-Authenticate", `Basic realm="linecheck serve", charset="UTF-8"`)
		http.Error(rw, "Unauthorized: give a user of --web.config.file's basic_auth_users", http.StatusUnauthorized)
	})
}
