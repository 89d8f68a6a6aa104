package features

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
)

// SpecText is the spec the catalog was written from
// (spec/agent-invoke-service.md), kept beside the catalog so that every
// report can name the text its verdicts rest on: the spec carries no
// version of its own.
//
//go:embed spec.md
var SpecText []byte

// SpecDigest returns "sha256:<hex>" of SpecText.
func SpecDigest() string { return digest(SpecText) }

// CatalogDigest returns "sha256:<hex>" of rules.yaml as embedded.
func CatalogDigest() string {
	b, err := FS.ReadFile("rules.yaml")
	if err != nil {
		return "unknown"
	}
	return digest(b)
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
