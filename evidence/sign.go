package evidence

import (
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/invokeconf/invokeconf/reports"
)

// A signed run's statement is an in-toto Statement v1
// (https://github.com/in-toto/attestation, spec/v1/statement.md) in a DSSE
// envelope (https://github.com/secure-systems-lab/dsse, envelope.md),
// written with the standard library: no library for either is served to
// this project, and both formats are short. The envelope is one line of
// SignatureFile, as in-toto's .intoto.jsonl files hold them.
const (
	// StatementType is the in-toto statement's _type.
	StatementType = "https://in-toto.io/Statement/v1"
	// PayloadType is the DSSE payload type of an in-toto statement.
	PayloadType = "application/vnd.in-toto+json"
	// PredicateType names this harness's certification predicate.
	PredicateType = "https://github.com/invokeconf/invokeconf/certification/v1"
)

// Statement is an in-toto statement: the files it is about, by digest,
// and what it says of them.
type Statement struct {
	Type          string    `json:"_type"`
	Subject       []Subject `json:"subject"`
	PredicateType string    `json:"predicateType"`
	Predicate     Predicate `json:"predicate"`
}

// Subject is a file of the run's folder and its digest.
type Subject struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"`
}

// Predicate is what a signed run states: which harness judged which
// target against which spec and catalog, and its verdicts.
type Predicate struct {
	Harness        string            `json:"harness"`
	HarnessVersion string            `json:"harnessVersion"`
	HarnessCommit  string            `json:"harnessCommit,omitempty"`
	HarnessBinary  string            `json:"harnessBinary"`
	SpecDigest     string            `json:"specDigest"`
	CatalogDigest  string            `json:"catalogDigest"`
	Target         string            `json:"target"`
	Product        string            `json:"product,omitempty"`
	ProductVersion string            `json:"productVersion,omitempty"`
	Started        string            `json:"started"`
	Outcome        string            `json:"outcome"`
	ExitCode       int               `json:"exitCode"`
	Headline       string            `json:"headline"`
	Verdicts       map[string]string `json:"verdicts"`
}

// Envelope is a DSSE envelope.
type Envelope struct {
	PayloadType string      `json:"payloadType"`
	Payload     string      `json:"payload"`
	Signatures  []Signature `json:"signatures"`
}

// Signature is one signature of a DSSE envelope.
type Signature struct {
	KeyID string `json:"keyid"`
	Sig   string `json:"sig"`
}

// pae is DSSE's pre-authentication encoding, what is signed:
// "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body.
func pae(payloadType string, body []byte) []byte {
	return []byte(fmt.Sprintf("DSSEv1 %d %s %d %s", len(payloadType), payloadType, len(body), body))
}

// signedFiles are the files of a run's folder a statement names, when
// present: the reports and the evidence.
var signedFiles = []string{reports.JSONFile, reports.HTMLFile, reports.JUnitFile, reports.CucumberFile, HARFile, PlanFile, ProfileFile}

// NewStatement states a run: the files of dir it wrote, by digest, and
// rep's identity and verdicts.
func NewStatement(dir string, rep *reports.Report) (*Statement, error) {
	st := &Statement{Type: StatementType, PredicateType: PredicateType}
	for _, name := range signedFiles {
		d, _, err := FileDigest(filepath.Join(dir, name))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		st.Subject = append(st.Subject, Subject{Name: name, Digest: map[string]string{"sha256": strings.TrimPrefix(d, "sha256:")}})
	}
	st.Predicate = predicateOf(rep)
	return st, nil
}

// predicateOf is what a statement says of rep.
func predicateOf(rep *reports.Report) Predicate {
	id := rep.Identity
	p := Predicate{Harness: rep.Harness, HarnessVersion: id.HarnessVersion, HarnessCommit: id.HarnessCommit,
		HarnessBinary: id.HarnessBinary, SpecDigest: id.SpecDigest, CatalogDigest: id.CatalogDigest, Target: rep.Target,
		Product: id.Product, ProductVersion: id.ProductVersion, Started: rep.Started.UTC().Format("2006-01-02T15:04:05Z"),
		Outcome: rep.Outcome, ExitCode: rep.ExitCode, Headline: rep.Headline, Verdicts: map[string]string{}}
	for _, r := range rep.Rules {
		p.Verdicts[r.ID] = string(r.Verdict)
	}
	return p
}

// Sign writes the signed statement of the run in dir (its reports and
// evidence already written) to dir's SignatureFile.
func Sign(dir string, rep *reports.Report, key ed25519.PrivateKey) error {
	st, err := NewStatement(dir, rep)
	if err != nil {
		return err
	}
	payload, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("sign: %w", err)
	}
	pub := key.Public().(ed25519.PublicKey)
	env := Envelope{PayloadType: PayloadType, Payload: base64.StdEncoding.EncodeToString(payload),
		Signatures: []Signature{{KeyID: KeyID(pub), Sig: base64.StdEncoding.EncodeToString(ed25519.Sign(key, pae(PayloadType, payload)))}}}
	b, err := json.Marshal(env)
	if err != nil {
		return fmt.Errorf("sign: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, SignatureFile), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("sign: %w", err)
	}
	return nil
}

// KeyID names a public key: "SHA256:" and the hex of the SHA-256 of its
// PKIX (SubjectPublicKeyInfo) DER form, the bytes `openssl pkey -pubout
// -outform DER` writes.
func KeyID(pub ed25519.PublicKey) string {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(der)
	return "SHA256:" + hex.EncodeToString(sum[:])
}

// CheckSignature reads dir's SignatureFile and checks it: a DSSE envelope
// of an in-toto statement of this harness's predicate, signed by pub; it
// returns the statement. It does not compare the statement with the files:
// Verify does.
func CheckSignature(dir string, pub ed25519.PublicKey) (*Statement, error) {
	b, err := os.ReadFile(filepath.Join(dir, SignatureFile))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("the run is not signed: %s is missing", SignatureFile)
		}
		return nil, err
	}
	line := strings.TrimSpace(string(b))
	if strings.Contains(line, "\n") {
		return nil, fmt.Errorf("%s holds more than one envelope", SignatureFile)
	}
	var env Envelope
	if err := json.Unmarshal([]byte(line), &env); err != nil {
		return nil, fmt.Errorf("%s is no DSSE envelope: %v", SignatureFile, err)
	}
	if env.PayloadType != PayloadType {
		return nil, fmt.Errorf("%s: payload type %q, not %q", SignatureFile, env.PayloadType, PayloadType)
	}
	payload, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		return nil, fmt.Errorf("%s: the payload is not base64: %v", SignatureFile, err)
	}
	signed := false
	for _, s := range env.Signatures {
		sig, err := base64.StdEncoding.DecodeString(s.Sig)
		if err == nil && ed25519.Verify(pub, pae(env.PayloadType, payload), sig) {
			signed = true
			break
		}
	}
	if !signed {
		var ids []string
		for _, s := range env.Signatures {
			ids = append(ids, s.KeyID)
		}
		sort.Strings(ids)
		return nil, fmt.Errorf("the signature does not verify with the key %s (the envelope names %s)", KeyID(pub), orNone(strings.Join(ids, ", ")))
	}
	var st Statement
	if err := json.Unmarshal(payload, &st); err != nil {
		return nil, fmt.Errorf("%s: the signed payload is no statement: %v", SignatureFile, err)
	}
	if st.Type != StatementType || st.PredicateType != PredicateType {
		return nil, fmt.Errorf("%s: a statement of type %q with predicate %q, not this harness's certification", SignatureFile, st.Type, st.PredicateType)
	}
	return &st, nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// LoadPrivateKey reads an ed25519 private key from a PEM file as `openssl
// genpkey -algorithm ed25519` writes it (PKCS #8, "PRIVATE KEY").
func LoadPrivateKey(path string) (ed25519.PrivateKey, error) {
	der, err := pemBlock(path, "PRIVATE KEY")
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	ek, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%s: a %T, not an ed25519 key (openssl genpkey -algorithm ed25519)", path, k)
	}
	return ek, nil
}

// LoadPublicKey reads an ed25519 public key from a PEM file as `openssl
// pkey -pubout` writes it (SubjectPublicKeyInfo, "PUBLIC KEY").
func LoadPublicKey(path string) (ed25519.PublicKey, error) {
	der, err := pemBlock(path, "PUBLIC KEY")
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	ek, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("%s: a %T, not an ed25519 key", path, k)
	}
	return ek, nil
}

// pemBlock returns the DER bytes of the file's PEM block of type want,
// saying what the file holds instead when it holds another.
func pemBlock(path, want string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(b)
	switch {
	case block == nil:
		return nil, fmt.Errorf("%s holds no PEM block (want %q)", path, want)
	case block.Type != want && strings.Contains(block.Type, "PRIVATE"):
		return nil, fmt.Errorf("%s holds a private key: give the public key (openssl pkey -in %s -pubout)", path, path)
	case block.Type != want:
		return nil, fmt.Errorf("%s holds a %q PEM block, not %q", path, block.Type, want)
	}
	return block.Bytes, nil
}
