package clientconf

import (
	"regexp"
	"strings"

	"github.com/invokeconf/invokeconf/profile"
)

// The command gets the harness's whole environment (its tests may need
// PATH, HOME, a package registry's settings...), and its output goes into
// the reports. So the values of the environment that look like secrets are
// hidden in that output and in the command line the reports show, as
// "$NAME".

// secretName matches the names of variables that usually hold secrets.
var secretName = regexp.MustCompile(`(?i)(TOKEN|SECRET|PASSW|PASSPHRASE|CREDENTIAL|PRIVATE|SIGNATURE|COOKIE|(^|_)AUTH($|_|ORIZATION)|API_?KEY|ACCESS_?KEY|(^|_)KEY($|_)|(^|_)PAT($|_)|WEBHOOK)`)

// secretValue matches values shaped like well-known tokens, whatever the
// variable's name: GitHub, GitLab, Slack, AWS, Google, OpenAI-style and
// Stripe keys, and JSON web tokens.
var secretValue = regexp.MustCompile(`^(gh[pousr]_|github_pat_|glpat-|xox[abposr]-|AKIA|ASIA|AIza|ya29\.|sk-|sk_live_|rk_live_|eyJ[A-Za-z0-9_-]{8,}\.)[A-Za-z0-9._\-]{8,}`)

// minSecret is the length from which a value is hidden: shorter values of
// secret-sounding names ("1", "true") would hide ordinary output.
const minSecret = 8

// secretsOf returns a Redactor of the values in env that look like secrets
// (by name, secretName; by shape, secretValue), and of the variables named
// in extra whatever their values' length: each becomes "$NAME", and any
// piece of profile.FragmentMin characters of it "[redacted]". The
// INVOKECONF_* variables are left out: the command gets the served
// profile's instead, whose keys the caller hides.
func secretsOf(env []string, extra []string) *profile.Redactor {
	named := map[string]bool{}
	for _, n := range extra {
		named[n] = true
	}
	marker := map[string]string{}
	var values []string
	for _, kv := range env {
		name, v, ok := strings.Cut(kv, "=")
		if !ok || v == "" || strings.HasPrefix(name, profile.EnvPrefix) {
			continue
		}
		// A path (a socket's, a key file's) is no secret, and hiding its
		// pieces would hide every other path that shares them.
		guessed := len(v) >= minSecret && !strings.HasPrefix(v, "/") && (secretName.MatchString(name) || secretValue.MatchString(v))
		if named[name] || guessed {
			if _, dup := marker[v]; !dup {
				marker[v] = "$" + name
				values = append(values, v)
			}
		}
	}
	return profile.NewRedactor(values, func(v string) string { return marker[v] })
}
