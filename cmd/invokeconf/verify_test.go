package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/invokeconf/invokeconf/evidence"
	"github.com/invokeconf/invokeconf/fixtures"
	"github.com/invokeconf/invokeconf/invokeconftest"
	"github.com/invokeconf/invokeconf/profile"
	"github.com/invokeconf/invokeconf/reports"
)

// keyPair writes an ed25519 key pair as PEM files, with openssl when it
// is installed (the files a vendor makes with 'openssl genpkey -algorithm
// ed25519' and 'openssl pkey -pubout'), else with the standard library in
// the same formats.
func keyPair(t *testing.T, name string) (priv, pub string) {
	t.Helper()
	dir := t.TempDir()
	priv, pub = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-pub.pem")
	if _, err := exec.LookPath("openssl"); err == nil {
		for _, args := range [][]string{{"genpkey", "-algorithm", "ed25519", "-out", priv}, {"pkey", "-in", priv, "-pubout", "-out", pub}} {
			if out, err := exec.Command("openssl", args...).CombinedOutput(); err != nil {
				t.Fatalf("openssl %v: %v\n%s", args, err, out)
			}
		}
		return priv, pub
	}
	pk, sk, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	skDER, err := x509.MarshalPKCS8PrivateKey(sk)
	if err != nil {
		t.Fatal(err)
	}
	pkDER, err := x509.MarshalPKIXPublicKey(pk)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, priv, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: skDER}))
	writeFile(t, pub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pkDER}))
	return priv, pub
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// copyDir copies a run's folder, so each test case can change its copy.
func copyDir(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(to, e.Name()), b)
	}
	return to
}

// editSummary changes a copy's summary.json.
func editSummary(t *testing.T, dir string, edit func(doc map[string]any)) {
	t.Helper()
	path := filepath.Join(dir, reports.JSONFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	edit(doc)
	if b, err = json.MarshalIndent(doc, "", "  "); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, b)
}

// TestVerifyARun: a run with evidence, signed, verifies, with the signer's
// key and without one; a verdict flipped in summary.json, one byte of the
// HAR file changed, the spec digest changed or another key each make
// verify exit 1 naming what differs. The run breaks SSE-05 (a defect), so
// verify confirms failures as well as passes.
func TestVerifyARun(t *testing.T) {
	t.Parallel()
	_, prof := serveProfile(t, "no-close")
	priv, pub := keyPair(t, "vendor")
	_, otherPub := keyPair(t, "other")
	out := t.TempDir()
	// The cells restate these areas' rules on every route: the evidence
	// needs none of them.
	code, stdout, stderr := invoke(t, "run", "--profile", prof, "--areas", "sse,formats", "--tags", "~@cells", "--quick", "--out", out, "--sign", priv)
	if code != 1 {
		t.Fatalf("run: exit %d, want 1 (SSE-05 fails)\n%s\n%s", code, stdout, stderr)
	}
	for _, f := range []string{evidence.HARFile, evidence.PlanFile, evidence.ProfileFile, evidence.SignatureFile} {
		if !strings.Contains(stdout, filepath.Join(out, f)) {
			t.Errorf("the console does not name %s:\n%s", f, stdout)
		}
	}
	har, err := os.ReadFile(filepath.Join(out, evidence.HARFile))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(har, []byte("sk-svc-")) {
		t.Errorf("%s holds a key", evidence.HARFile)
	}

	for _, args := range [][]string{{out}, {"--key", pub, out}} {
		code, stdout, stderr := invoke(t, append([]string{"verify"}, args...)...)
		if code != 0 {
			t.Fatalf("verify %v: exit %d\n%s\n%s", args, code, stdout, stderr)
		}
		for _, want := range []string{"recomputed from the traffic", evidence.TrustNotDecidable, "VERIFIED", "reproduced exactly"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("verify %v says nothing of %q:\n%s", args, want, stdout)
			}
		}
		if len(args) > 1 && !strings.Contains(stdout, "signature: valid") {
			t.Errorf("verify --key says nothing of the signature:\n%s", stdout)
		}
	}

	flip := func(rule, to string) func(doc map[string]any) {
		return func(doc map[string]any) {
			for _, r := range doc["rules"].([]any) {
				if m := r.(map[string]any); m["id"] == rule {
					m["verdict"] = to
				}
			}
		}
	}
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, dir string)
		key    string
		want   []string
	}{
		{"a passing verdict flipped", func(t *testing.T, dir string) { editSummary(t, dir, flip("SSE-01", "fail")) }, "",
			[]string{"SSE-01: the report says fail, but no finding shows it broken"}},
		{"a failing verdict flipped", func(t *testing.T, dir string) { editSummary(t, dir, flip("SSE-05", "pass")) }, "",
			[]string{"SSE-05: the report says pass, but the evidence shows it broken"}},
		{"a byte of the HAR file", func(t *testing.T, dir string) {
			path := filepath.Join(dir, evidence.HARFile)
			b, _ := os.ReadFile(path)
			i := bytes.Index(b, []byte("event: start"))
			b[i+len("event: s")] = 'S'
			writeFile(t, path, b)
		}, "", []string{evidence.HARFile + " changed", "the judgement of SSE-01 differs"}},
		{"the spec digest", func(t *testing.T, dir string) {
			editSummary(t, dir, func(doc map[string]any) {
				doc["identity"].(map[string]any)["specDigest"] = "sha256:" + strings.Repeat("0", 64)
			})
		}, "", []string{"a report of another spec"}},
		{"another harness build", func(t *testing.T, dir string) {
			editSummary(t, dir, func(doc map[string]any) {
				id := doc["identity"].(map[string]any)
				id["harnessBinary"], id["harnessCommit"], id["harnessVersion"] = "sha256:"+strings.Repeat("1", 64), "", "dev"
			})
		}, "", []string{"a report of another harness build"}},
		{"a signed report changed", func(t *testing.T, dir string) { editSummary(t, dir, flip("SSE-01", "fail")) }, pub,
			[]string{"signature: summary.json changed since it was signed"}},
		{"another key", func(t *testing.T, dir string) {}, otherPub, []string{"signature: the signature does not verify with the key"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDir(t, out)
			tc.change(t, dir)
			args := []string{"verify", dir}
			if tc.key != "" {
				args = []string{"verify", "--key", tc.key, dir}
			}
			code, stdout, stderr := invoke(t, args...)
			if code != 1 {
				t.Fatalf("exit %d, want 1\n%s\n%s", code, stdout, stderr)
			}
			if !strings.Contains(stdout, "NOT VERIFIED") {
				t.Errorf("verify does not say NOT VERIFIED:\n%s", stdout)
			}
			for _, want := range tc.want {
				if !strings.Contains(stdout, want) {
					t.Errorf("verify does not name %q:\n%s", want, stdout)
				}
			}
		})
	}
}

// TestVerifyUsage: verify without a folder, on a folder without a report,
// on a run without evidence, or with a key file that is no public key, is
// bad usage (exit 2).
func TestVerifyUsage(t *testing.T) {
	t.Parallel()
	priv, _ := keyPair(t, "k")
	noEvidence := t.TempDir()
	if code, stdout, stderr := invoke(t, "run", "--rules", "SSE-01", "--quick", "--out", noEvidence, "--evidence=false"); code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, args := range [][]string{{}, {t.TempDir()}, {noEvidence}, {"--key", priv, noEvidence}, {"a", "b"}} {
		code, _, stderr := invoke(t, append([]string{"verify"}, args...)...)
		if code != 2 {
			t.Errorf("verify %v: exit %d, want 2\n%s", args, code, stderr)
		}
	}
	if code, _, stderr := invoke(t, "run", "--rules", "SSE-01", "--out", t.TempDir(), "--evidence=false", "--sign", priv); code != 2 {
		t.Errorf("run --sign --evidence=false: exit %d, want 2\n%s", code, stderr)
	}
}

// echoing is an implementation written apart from the reference server, as
// a vendor's could be: it answers every invoke with the prompt (in each
// response form, badly) and echoes the caller's key in its body, so the
// evidence hides bytes the run judged whole. The thread its header names
// and the one its events name are two pieces of the key's secret: they
// differ, and hidden they read the same.
func echoing() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
		key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		sec := key[strings.LastIndex(key, "-")+1:]
		header, named := "thr_1", "thr_1"
		if len(sec) > 9 {
			header, named = "thr_"+sec[:8], "thr_"+sec[1:9]
		}
		w.Header().Set("X-SVC-Thread-Id", header)
		switch r.Header.Get("Accept") {
		case "text/event-stream":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: start\ndata: {}\n\nid: run_1\ndata: {\"content\":%q,\"runID\":\"run_1\",\"threadID\":%q}\n\n"+
				"id: run_1:after\ndata: {\"runComplete\":true,\"content\":%q}\n\nevent: close\ndata: {}\n\n", body, named, key)
		case "application/json":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"items":[{"content":%q},{"content":%q,"runComplete":true}]}`, body, key)
		default:
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprintf(w, "%s %s", body, key)
		}
	})
}

// TestVerifyAnotherImplementation: a run against a target that is not the
// reference server, and that echoes keys the evidence hides, verifies: the
// run records what the evidence shows where hiding the keys changes it.
func TestVerifyAnotherImplementation(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(echoing())
	t.Cleanup(ts.Close)
	p, err := fixtures.Reference()
	if err != nil {
		t.Fatal(err)
	}
	p.BaseURL = ts.URL
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	prof := filepath.Join(t.TempDir(), "target.yaml")
	writeFile(t, prof, b)
	out := t.TempDir()
	code, stdout, stderr := invoke(t, "run", "--profile", prof, "--areas", "sse,formats,body", "--tags", "~@cells", "--quick", "--out", out)
	if code != 1 {
		t.Fatalf("run: exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	var rep reports.Report
	sum, _ := os.ReadFile(filepath.Join(out, reports.JSONFile))
	if err := json.Unmarshal(sum, &rep); err != nil || rep.Evidence == nil {
		t.Fatalf("summary.json: %v, evidence %v", err, rep.Evidence)
	}
	if len(rep.Evidence.KeysHidden) == 0 || len(rep.Evidence.FromEvidence) == 0 {
		t.Errorf("the target echoes keys in every answer: %d exchanges had keys hidden, %d rules judged otherwise from the evidence",
			len(rep.Evidence.KeysHidden), len(rep.Evidence.FromEvidence))
	}
	// The keys it echoed are hidden in every file of the folder, each piece
	// of a secret of profile.FragmentMin characters or more included (the
	// files' digests left aside: a hex secret's piece may stand in one by
	// chance, as may an all-digit piece in a number).
	digests := regexp.MustCompile(`[0-9a-f]{64}`)
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(out, e.Name()))
		b = digests.ReplaceAll(b, nil)
		for _, key := range p.Secrets() {
			sec := key[strings.LastIndex(key, "-")+1:]
			for i := 0; i+profile.FragmentMin <= len(sec); i++ {
				if piece := sec[i : i+profile.FragmentMin]; strings.Trim(piece, "0123456789") != "" && bytes.Contains(b, []byte(piece)) {
					t.Fatalf("%s holds %q, a piece of a key's secret", e.Name(), sec[i:i+profile.FragmentMin])
				}
			}
		}
	}
	code, stdout, stderr = invoke(t, "verify", out)
	if code != 0 {
		t.Fatalf("verify: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "VERIFIED") || !strings.Contains(stdout, evidence.TrustHidden) {
		t.Errorf("verify:\n%s", stdout)
	}
}

// TestVerifyLegalVariants: a run against the reference server with legal
// behaviours it does not use by default (the line endings of the SSE
// grammar mixed, members of its own, 202 for async, lower-case header
// names) verifies: the evidence holds the bytes as they passed, and the
// checks judge them again the same.
func TestVerifyLegalVariants(t *testing.T) {
	t.Parallel()
	p := invokeconftest.NewServer(t, invokeconftest.WithVariants("sse-mixed-endings", "extra-members", "async-202", "header-case")).Profile
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	prof := filepath.Join(t.TempDir(), "target.yaml")
	writeFile(t, prof, b)
	out := t.TempDir()
	if code, stdout, stderr := invoke(t, "run", "--profile", prof, "--areas", "sse,formats,async,events", "--quick", "--out", out); code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr := invoke(t, "verify", out)
	if code != 0 || !strings.Contains(stdout, "VERIFIED") || !strings.Contains(stdout, "reproduced exactly") {
		t.Fatalf("verify: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestGuidePublishing: the guide's "Publishing your result" works word for
// word: its openssl commands make the key pair (when openssl is here), its
// run signs the run (on a quick selection, against a reference server as
// the target of my-target.yaml), and the customer's one command verifies
// the folder with the public key.
func TestGuidePublishing(t *testing.T) {
	t.Parallel()
	guide := readGuide(t)
	_, section, ok := strings.Cut(guide, "\n## Publishing your result\n")
	if !ok {
		t.Fatal("the guide has no section \"Publishing your result\"")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	dir := t.TempDir()
	_, prof := serveProfile(t)
	files := strings.NewReplacer("my-target.yaml", prof, "vendor-key.pem", filepath.Join(dir, "vendor-key.pem"),
		"vendor-pub.pem", filepath.Join(dir, "vendor-pub.pem"), "acme-2026-11", filepath.Join(dir, "acme-2026-11"))
	_, haveOpenssl := exec.LookPath("openssl")
	var ran []string
	for _, b := range blocks(section, "sh") {
		for _, line := range strings.Split(strings.TrimSpace(b), "\n") {
			line = files.Replace(line)
			args := strings.Fields(line)
			switch {
			case strings.HasPrefix(line, "openssl "):
				if haveOpenssl != nil {
					break // the run's case makes the pair
				}
				if out, err := exec.Command("openssl", args[1:]...).CombinedOutput(); err != nil {
					t.Fatalf("%s: %v\n%s", line, err, out)
				}
			case strings.Contains(line, "&& ./invokeconf run "):
				_, built, _ := strings.Cut(line, "&& ./invokeconf ")
				if haveOpenssl != nil {
					priv, _ := keyPair(t, "vendor")
					built = strings.ReplaceAll(built, filepath.Join(dir, "vendor-key.pem"), priv)
					pub := strings.TrimSuffix(priv, ".pem") + "-pub.pem"
					b, _ := os.ReadFile(pub)
					writeFile(t, filepath.Join(dir, "vendor-pub.pem"), b)
				}
				code, stdout, stderr := invoke(t, append(strings.Fields(built), "--areas", "sse", "--quick")...)
				if code != 0 {
					t.Fatalf("%s: exit %d\n%s\n%s", line, code, stdout, stderr)
				}
			case strings.HasPrefix(line, "go run github.com/invokeconf/invokeconf/cmd/invokeconf@HARNESS "):
				code, stdout, stderr := invoke(t, args[3:]...)
				if code != 0 || !strings.Contains(stdout, "VERIFIED: ") || !strings.Contains(stdout, "signature: valid") {
					t.Fatalf("%s: exit %d\n%s\n%s", line, code, stdout, stderr)
				}
			default:
				t.Fatalf("the section runs a command this test does not know: %s", line)
			}
			ran = append(ran, args[0])
		}
	}
	if len(ran) < 4 {
		t.Fatalf("the section's commands: %v; want the key pair, the signed run and the customer's verify", ran)
	}
}
