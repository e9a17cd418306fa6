// Package exporter serves fabricctl's Prometheus endpoints (watch's and
// host apply --watch's /metrics and /healthz): bounded timeouts and header
// size, a cap on concurrent scrapes, and optional TLS and authentication
// configured by a web-config file in the Prometheus exporter-toolkit format
// (github.com/prometheus/exporter-toolkit, docs/web-configuration.md), read
// here without the toolkit.
package exporter

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"golang.org/x/crypto/bcrypt"
	"gopkg.in/yaml.v3"
)

// Config is a web-config file. The keys are exporter-toolkit's; a key the
// toolkit does not know is refused (the toolkit decodes strictly too), except
// bearer_token_hashes, fabricctl's own (the toolkit has no bearer tokens).
type Config struct {
	TLS  *TLSConfig `yaml:"tls_server_config"`
	HTTP HTTPConfig `yaml:"http_server_config"`
	// BasicAuthUsers maps user names to bcrypt hashes of their passwords.
	BasicAuthUsers map[string]string `yaml:"basic_auth_users"`
	// BearerTokenHashes are bcrypt hashes of the bearer tokens accepted in
	// an "Authorization: Bearer" header (fabricctl's extension).
	BearerTokenHashes []string `yaml:"bearer_token_hashes"`
	// RateLimit is the toolkit's; fabricctl caps concurrent scrapes
	// instead and refuses a file that sets it.
	RateLimit *struct {
		Interval string `yaml:"interval"`
		Burst    int    `yaml:"burst"`
	} `yaml:"rate_limit"`

	file string
}

// TLSConfig is tls_server_config.
type TLSConfig struct {
	Cert               string   `yaml:"cert"`
	Key                string   `yaml:"key"`
	ClientCA           string   `yaml:"client_ca"`
	CertFile           string   `yaml:"cert_file"`
	KeyFile            string   `yaml:"key_file"`
	ClientAuthType     string   `yaml:"client_auth_type"`
	ClientCAFile       string   `yaml:"client_ca_file"`
	ClientAllowedSANs  []string `yaml:"client_allowed_sans"`
	MinVersion         string   `yaml:"min_version"`
	MaxVersion         string   `yaml:"max_version"`
	CipherSuites       []string `yaml:"cipher_suites"`
	PreferServerCipher *bool    `yaml:"prefer_server_cipher_suites"`
	CurvePreferences   []string `yaml:"curve_preferences"`
}

// HTTPConfig is http_server_config.
type HTTPConfig struct {
	HTTP2   *bool             `yaml:"http2"`
	Headers map[string]string `yaml:"headers"`
}

// The response headers the toolkit lets a web-config set.
var allowedHeaders = []string{"Content-Security-Policy", "X-Frame-Options", "X-Content-Type-Options", "X-XSS-Protection", "Strict-Transport-Security"}

// LoadConfig reads and checks a web-config file. Errors name the file (and
// the line where the YAML decoder reports one); they never contain a
// password hash or key.
func LoadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("web config: %w", err)
	}
	c := &Config{file: path}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	// An empty file is the toolkit's "no TLS, no authentication".
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("web config %s: %w", path, err)
	}
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("web config %s: %w", path, err)
	}
	return c, nil
}

func (c *Config) check() error {
	if c.RateLimit != nil {
		return errors.New("rate_limit: not supported by fabricctl (it caps concurrent scrapes instead); remove it")
	}
	for user, h := range c.BasicAuthUsers {
		if _, err := bcrypt.Cost([]byte(h)); err != nil {
			return fmt.Errorf("basic_auth_users[%q]: not a bcrypt hash (htpasswd -nBC 10 \"\" | tr -d ':\\n' makes one)", user)
		}
	}
	for i, h := range c.BearerTokenHashes {
		if _, err := bcrypt.Cost([]byte(h)); err != nil {
			return fmt.Errorf("bearer_token_hashes[%d]: not a bcrypt hash", i)
		}
	}
	for k := range c.HTTP.Headers {
		if !slices.Contains(allowedHeaders, k) {
			return fmt.Errorf("http_server_config.headers: %q cannot be set (allowed: %s)", k, strings.Join(allowedHeaders, ", "))
		}
	}
	if c.TLS != nil {
		if _, err := c.TLS.build(); err != nil {
			return fmt.Errorf("tls_server_config: %w", err)
		}
	}
	return nil
}

// HasAuth reports whether requests must authenticate.
func (c *Config) HasAuth() bool {
	return c != nil && (len(c.BasicAuthUsers) > 0 || len(c.BearerTokenHashes) > 0)
}

var tlsVersions = map[string]uint16{"TLS10": tls.VersionTLS10, "TLS11": tls.VersionTLS11, "TLS12": tls.VersionTLS12, "TLS13": tls.VersionTLS13}

var clientAuthTypes = map[string]tls.ClientAuthType{
	"":                           tls.NoClientCert,
	"NoClientCert":               tls.NoClientCert,
	"RequestClientCert":          tls.RequestClientCert,
	"RequireAnyClientCert":       tls.RequireAnyClientCert,
	"VerifyClientCertIfGiven":    tls.VerifyClientCertIfGiven,
	"RequireAndVerifyClientCert": tls.RequireAndVerifyClientCert,
}

var curves = map[string]tls.CurveID{"CurveP256": tls.CurveP256, "CurveP384": tls.CurveP384, "CurveP521": tls.CurveP521,
	"X25519": tls.X25519, "X25519MLKEM768": tls.X25519MLKEM768}

// build makes the server's tls.Config. The certificate and key files are
// read again at every handshake when they changed (a rotated Secret is used
// without a restart).
func (t *TLSConfig) build() (*tls.Config, error) {
	switch {
	case (t.CertFile == "") == (t.Cert == ""):
		return nil, errors.New("exactly one of cert_file and cert is required")
	case (t.KeyFile == "") == (t.Key == ""):
		return nil, errors.New("exactly one of key_file and key is required")
	case t.ClientCAFile != "" && t.ClientCA != "":
		return nil, errors.New("client_ca_file and client_ca are exclusive")
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if t.MinVersion != "" {
		v, ok := tlsVersions[t.MinVersion]
		if !ok {
			return nil, fmt.Errorf("min_version %q: want TLS10, TLS11, TLS12 or TLS13", t.MinVersion)
		}
		cfg.MinVersion = v
	}
	if t.MaxVersion != "" {
		v, ok := tlsVersions[t.MaxVersion]
		if !ok {
			return nil, fmt.Errorf("max_version %q: want TLS10, TLS11, TLS12 or TLS13", t.MaxVersion)
		}
		if v < cfg.MinVersion {
			return nil, fmt.Errorf("max_version %s is below min_version", t.MaxVersion)
		}
		cfg.MaxVersion = v
	}
	auth, ok := clientAuthTypes[t.ClientAuthType]
	if !ok {
		return nil, fmt.Errorf("client_auth_type %q: want NoClientCert, RequestClientCert, RequireAnyClientCert, VerifyClientCertIfGiven or RequireAndVerifyClientCert", t.ClientAuthType)
	}
	cfg.ClientAuth = auth
	if t.ClientCAFile != "" || t.ClientCA != "" {
		pem := []byte(t.ClientCA)
		if t.ClientCAFile != "" {
			var err error
			if pem, err = os.ReadFile(t.ClientCAFile); err != nil {
				return nil, fmt.Errorf("client_ca_file: %w", err)
			}
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, errors.New("client CA: no PEM certificate in it")
		}
		cfg.ClientCAs = pool
	}
	if (auth == tls.VerifyClientCertIfGiven || auth == tls.RequireAndVerifyClientCert) && cfg.ClientCAs == nil {
		return nil, fmt.Errorf("client_auth_type %s needs client_ca_file or client_ca", t.ClientAuthType)
	}
	if len(t.ClientAllowedSANs) > 0 {
		if auth != tls.RequireAnyClientCert && auth != tls.RequireAndVerifyClientCert {
			return nil, errors.New("client_allowed_sans needs client_auth_type RequireAnyClientCert or RequireAndVerifyClientCert")
		}
		cfg.VerifyPeerCertificate = t.verifySANs
	}
	for _, name := range t.CipherSuites {
		id, ok := cipherSuite(name)
		if !ok {
			return nil, fmt.Errorf("cipher_suites: %q is not one of Go's secure suites (crypto/tls CipherSuites)", name)
		}
		cfg.CipherSuites = append(cfg.CipherSuites, id)
	}
	for _, name := range t.CurvePreferences {
		id, ok := curves[name]
		if !ok {
			return nil, fmt.Errorf("curve_preferences: %q: want CurveP256, CurveP384, CurveP521, X25519 or X25519MLKEM768", name)
		}
		cfg.CurvePreferences = append(cfg.CurvePreferences, id)
	}
	kp := &keyPair{certFile: t.CertFile, keyFile: t.KeyFile, cert: []byte(t.Cert), key: []byte(t.Key)}
	if _, err := kp.get(); err != nil {
		return nil, err
	}
	cfg.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return kp.get() }
	return cfg, nil
}

func cipherSuite(name string) (uint16, bool) {
	for _, s := range tls.CipherSuites() {
		if s.Name == name {
			return s.ID, true
		}
	}
	return 0, false
}

// verifySANs accepts a client certificate only when one of its subject
// alternative names is in client_allowed_sans.
func (t *TLSConfig) verifySANs(raw [][]byte, _ [][]*x509.Certificate) error {
	if len(raw) == 0 {
		return errors.New("no client certificate")
	}
	c, err := x509.ParseCertificate(raw[0])
	if err != nil {
		return err
	}
	var sans []string
	sans = append(sans, c.DNSNames...)
	sans = append(sans, c.EmailAddresses...)
	for _, ip := range c.IPAddresses {
		sans = append(sans, ip.String())
	}
	for _, u := range c.URIs {
		sans = append(sans, u.String())
	}
	for _, s := range sans {
		if slices.Contains(t.ClientAllowedSANs, s) {
			return nil
		}
	}
	return errors.New("client certificate has no allowed SAN")
}
