package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/invokeconf/invokeconf/fakeserver"
	"github.com/invokeconf/invokeconf/fixtures"
	"github.com/invokeconf/invokeconf/internal/suggest"
	"github.com/invokeconf/invokeconf/modelserver"
	"github.com/invokeconf/invokeconf/profile"
)

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "listen address (127.0.0.1:0 picks a free port)")
	seedPath := fs.String("fixtures", "", "seed file in the target-profile format (default: the embedded fixtures/reference.yaml)")
	writeProfile := fs.String("write-profile", "", "write the profile of the served target to this file")
	quiet := fs.Bool("quiet", false, "do not log requests")
	modelURL := fs.String("model-url", "", "run the agent on this OpenAI-compatible API (base URL, e.g. http://127.0.0.1:8090/v1 from 'invokeconf model') instead of in process")
	modelName := fs.String("model", "", "with --model-url: the model to ask for (default "+modelserver.DefaultModel+")")
	maxThreads := fs.Int("max-threads", fakeserver.DefaultMaxThreads, "threads kept for invokes; beyond it the least recently used idle thread is forgotten (then 404)")
	adminKey := fs.String("admin-key", "", "open the admin routes under "+fakeserver.AdminPrefix+" (switch defects and variants, reset, recent requests; docs/clients.md) to Authorization: Bearer KEY; never a service key. A command line is visible to other users (ps): prefer --admin-key-file or "+adminKeyEnv)
	adminKeyFile := fs.String("admin-key-file", "", "read the admin key (--admin-key) from the first line of this file")
	var defects multiFlag
	fs.Var(&defects, "defect", "switch on a defect (repeatable); see 'invokeconf defects'")
	var variants multiFlag
	fs.Var(&variants, "variant", "switch on a legal variant the reference does not use by default (repeatable); see 'invokeconf variants'")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkSwitches(defects, variants); err != nil {
		return err
	}
	if err := readAdminKey(adminKey, *adminKeyFile, os.LookupEnv); err != nil {
		return err
	}
	var seed *profile.Profile
	var err error
	if *seedPath == "" {
		seed, err = fixtures.Reference()
	} else {
		seed, err = profile.Load(*seedPath)
	}
	if err != nil {
		return usageError{err}
	}
	var logger *slog.Logger
	if !*quiet {
		logger = slog.New(slog.NewTextHandler(stderr, nil))
	}
	srv, err := fakeserver.Listen(fakeserver.Config{Profile: seed, Defects: defects, Variants: variants, Logger: logger,
		ModelURL: *modelURL, ModelName: *modelName, MaxThreads: *maxThreads, AdminKey: *adminKey}, *addr)
	if err != nil {
		return usageError{err}
	}
	defer srv.Close()
	served := srv.Profile()
	served.BaseURL = srv.URL
	if *writeProfile != "" {
		b, err := served.Marshal()
		if err != nil {
			return err
		}
		if err := os.WriteFile(*writeProfile, b, 0o600); err != nil {
			return fmt.Errorf("write profile: %w", err)
		}
	}
	printServeInfo(stdout, served, defects, variants, *writeProfile, *modelURL, *adminKey != "")
	select {
	case <-ctx.Done():
		fmt.Fprintln(stdout, "invokeconf serve: stopping")
		return nil
	case <-srv.Done():
		return srv.Err()
	}
}

// printServeInfo tells a developer what they need to use the server. The
// reference server's keys are fixtures, not secrets, so they are shown.
func printServeInfo(w io.Writer, p *profile.Profile, defects, variants []string, profilePath, modelURL string, admin bool) {
	fmt.Fprintf(w, "invokeconf reference server listening on %s\n", p.BaseURL)
	if modelURL != "" {
		fmt.Fprintf(w, "the agent runs on the model at %s\n", modelURL)
	}
	if len(defects) > 0 {
		fmt.Fprintf(w, "defects switched on: %s\n", strings.Join(defects, ", "))
	}
	if len(variants) > 0 {
		fmt.Fprintf(w, "variants switched on: %s\n", strings.Join(variants, ", "))
	}
	fmt.Fprintln(w, "\nkeys by role:")
	for _, role := range fakeserver.KeyRoles(p) {
		k, _ := p.Key(role)
		fmt.Fprintf(w, "  %-16s %s\n", role, k)
	}
	fmt.Fprintln(w, "\nagents:")
	for _, role := range []string{"main", "other", "restricted"} {
		a, err := p.Agent(role)
		if err != nil {
			continue
		}
		line := a.ID
		if a.Alias != "" {
			line += " (alias " + a.Alias + ")"
		}
		fmt.Fprintf(w, "  %-16s %s\n", role, line)
	}
	if p.Projects.Main.ID != "" {
		fmt.Fprintf(w, "\nproject main:      %s\n", p.Projects.Main.ID)
	}
	if p.Projects.Other.ID != "" {
		fmt.Fprintf(w, "project other:     %s (the scope of the key otherProject)\n", p.Projects.Other.ID)
	}
	if p.Threads.Main.ID != "" {
		fmt.Fprintf(w, "thread main:       %s (a thread of agent main; the scope of the key threadChat)\n", p.Threads.Main.ID)
	}
	if p.NonAgentID != "" {
		fmt.Fprintf(w, "non-agent ID:      %s\n", p.NonAgentID)
	}
	printBundleInfo(w, p)
	if profilePath != "" {
		fmt.Fprintf(w, "\nprofile written to %s\n", profilePath)
	}
	if k, err := p.Key("agent"); err == nil {
		fmt.Fprintf(w, "\ntry it:\n  curl -N -H 'Authorization: Bearer %s' -H 'Accept: text/event-stream' -H 'Content-Type: text/plain' --data-binary 'Hello, agent' %s/api/invoke/%s\n",
			k, p.BaseURL, p.Agents.Main.ID)
	}
	if admin {
		// The admin key is the caller's own: it is not printed.
		fmt.Fprintf(w, "\nadmin routes:      %s%s (Authorization: Bearer <the --admin-key>; docs/clients.md)\n", p.BaseURL, fakeserver.AdminPrefix)
	}
	fmt.Fprintln(w, "\nPress Ctrl-C to stop.")
}

// printBundleInfo shows the bundle extension routes and the export project
// (docs/bundles.md).
func printBundleInfo(w io.Writer, p *profile.Profile) {
	if len(p.Routes) > 0 {
		fmt.Fprintln(w, "\nextension routes (docs/bundles.md):")
		names := make([]string, 0, len(p.Routes))
		for n := range p.Routes {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(w, "  %-20s %s\n", n, p.Routes[n])
		}
	}
	if e := p.Bundles.Export; e.ProjectID != "" {
		fmt.Fprintf(w, "export project:    %s (agent %s): GET %s/api/assistants/%s/projects/%s/bundle\n",
			e.ProjectID, e.AgentID, p.BaseURL, e.AgentID, e.ProjectID)
	}
}

// checkSwitches names unknown defect and variant switches with the nearest
// known one, instead of the whole list.
func checkSwitches(defects, variants []string) error {
	var dn, vn []string
	for _, d := range fakeserver.Defects() {
		dn = append(dn, d.Name)
	}
	for _, v := range fakeserver.Variants() {
		vn = append(vn, v.Name)
	}
	for _, list := range []struct {
		kind  string
		given []string
		known []string
	}{{"defect", defects, dn}, {"variant", variants, vn}} {
		for _, name := range list.given {
			if !slices.Contains(list.known, name) {
				return usageError{fmt.Errorf("--%s: unknown %s %q%s (see 'invokeconf %ss')", list.kind, list.kind, name, suggest.DidYouMean(name, list.known), list.kind)}
			}
		}
	}
	return nil
}

// adminKeyEnv is the variable serve reads the admin key from when neither
// --admin-key nor --admin-key-file gives it.
const adminKeyEnv = "INVOKECONF_ADMIN_KEY"

// readAdminKey fills in *key from file (its first line) or, when neither
// flag gives one, from adminKeyEnv. Both flags at once, or a file that
// cannot be read or holds no key, are bad usage.
func readAdminKey(key *string, file string, lookup func(string) (string, bool)) error {
	switch {
	case file != "" && *key != "":
		return usageError{fmt.Errorf("give the admin key once: --admin-key or --admin-key-file, not both")}
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return usageError{fmt.Errorf("--admin-key-file: %w", err)}
		}
		first, _, _ := strings.Cut(string(b), "\n")
		if *key = strings.TrimSpace(first); *key == "" {
			return usageError{fmt.Errorf("--admin-key-file %s: its first line holds no key", file)}
		}
	case *key == "":
		if v, ok := lookup(adminKeyEnv); ok {
			*key = strings.TrimSpace(v)
		}
	}
	return nil
}
