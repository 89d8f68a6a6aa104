package reports

import (
	"net/url"
	"runtime/debug"
)

// Version is the harness version. Release builds set it:
//
//	go build -ldflags "-X github.com/invokeconf/invokeconf/reports.Version=v1.2.0" ./cmd/invokeconf
var Version = ""

// HarnessVersion names the harness build in reports: Version when set, else
// the module version, else the VCS revision Go stamped into the binary,
// else "dev".
func HarnessVersion() string {
	v := "invokeconf "
	if Version != "" {
		return v + Version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v + "dev"
	}
	if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return v + bi.Main.Version
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return v + "dev (" + bi.GoVersion + ")"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "+dirty"
	}
	return v + "dev-" + rev + " (" + bi.GoVersion + ")"
}

// redactURL hides a password in a URL's user information.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return s
	}
	return u.Redacted()
}
