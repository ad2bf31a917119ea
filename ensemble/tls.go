package ensemble

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// TLSFiles are the PEM files of an ensemble started with Options.TLS, in
// its directory (removed with it). A client needs CA, Cert and Key: the
// servers check client certificates (ZooKeeper's default,
// ssl.clientAuth=need).
type TLSFiles struct {
	CA   string `json:"ca"`   // the certificate of the CA that signed the servers' and the client's certificates
	Cert string `json:"cert"` // a client certificate (CN=zkherd)
	Key  string `json:"key"`  // its private key
	// ServerKeyStore holds the servers' certificate and key, as ZooKeeper's
	// PEM keystore wants them (for 127.0.0.1 and localhost).
	ServerKeyStore string `json:"server_keystore"`
}

// certValidity is how long the generated certificates last: the life of
// any local ensemble, with room for clock skew at the start.
const certValidity = 30 * 24 * time.Hour

// makeTLSFiles writes a fresh CA, a server certificate for 127.0.0.1 and
// localhost, and a client certificate into dir, and returns the files and
// a client configuration that trusts the CA and presents the client
// certificate.
func makeTLSFiles(dir string) (TLSFiles, *tls.Config, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return TLSFiles{}, nil, fmt.Errorf("ensemble: %w", err)
	}
	now := time.Now().Add(-time.Hour)
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return TLSFiles{}, nil, fmt.Errorf("ensemble: CA key: %w", err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "zkherd local ensemble CA"},
		NotBefore:             now,
		NotAfter:              now.Add(certValidity),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return TLSFiles{}, nil, fmt.Errorf("ensemble: CA certificate: %w", err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return TLSFiles{}, nil, fmt.Errorf("ensemble: CA certificate: %w", err)
	}
	leaf := func(serial int64, cn string, usage x509.ExtKeyUsage, server bool) (certPEM, keyPEM []byte, err error) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, nil, err
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial),
			Subject:      pkix.Name{CommonName: cn},
			NotBefore:    now,
			NotAfter:     now.Add(certValidity),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		}
		if server {
			tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
			tmpl.DNSNames = []string{"localhost"}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
		if err != nil {
			return nil, nil, err
		}
		// PKCS#8 ("PRIVATE KEY") is the form ZooKeeper's PEM keystore reads.
		pk, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return nil, nil, err
		}
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
			pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pk}), nil
	}
	serverCert, serverKey, err := leaf(2, "zkherd local ensemble server", x509.ExtKeyUsageServerAuth, true)
	if err != nil {
		return TLSFiles{}, nil, fmt.Errorf("ensemble: server certificate: %w", err)
	}
	clientCert, clientKey, err := leaf(3, "zkherd", x509.ExtKeyUsageClientAuth, false)
	if err != nil {
		return TLSFiles{}, nil, fmt.Errorf("ensemble: client certificate: %w", err)
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	files := TLSFiles{
		CA:             filepath.Join(dir, "ca.pem"),
		Cert:           filepath.Join(dir, "client.pem"),
		Key:            filepath.Join(dir, "client-key.pem"),
		ServerKeyStore: filepath.Join(dir, "server.pem"),
	}
	for path, content := range map[string][]byte{
		files.CA:             caPEM,
		files.Cert:           clientCert,
		files.Key:            clientKey,
		files.ServerKeyStore: append(serverKey, serverCert...),
	} {
		if err := os.WriteFile(path, content, 0o600); err != nil {
			return TLSFiles{}, nil, fmt.Errorf("ensemble: %w", err)
		}
	}
	pair, err := tls.X509KeyPair(clientCert, clientKey)
	if err != nil {
		return TLSFiles{}, nil, fmt.Errorf("ensemble: client certificate: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	return files, &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, nil
}
