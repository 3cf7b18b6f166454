package cli

import (
	"runtime/debug"
	"strings"
)

// releaseVersion is the version scripts/release stamps into the binaries it
// builds (go build -ldflags "-X …/internal/cli.releaseVersion=v1.2.3"):
// release archives and npm packages are built from a checkout, where the
// toolchain records no module version of its own. Empty in every other
// build. It is the one package-level variable of the CLI, written only by
// the linker.
var releaseVersion string

// version says which pickup this is: the version scripts/release stamped,
// else the one the Go toolchain recorded in the binary (the module version
// for `go install …@vX`, else "devel"), plus the commit and whether the tree
// had uncommitted changes for a build from a git checkout.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		if releaseVersion != "" {
			return releaseVersion
		}
		return "unknown"
	}
	v := info.Main.Version
	if releaseVersion != "" {
		v = releaseVersion
	}
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = ", modified"
			}
		}
	}
	var extra []string
	if rev != "" {
		extra = append(extra, "commit "+rev[:min(12, len(rev))]+modified)
	}
	extra = append(extra, info.GoVersion)
	return v + " (" + strings.Join(extra, ", ") + ")"
}
