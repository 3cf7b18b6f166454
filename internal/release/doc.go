// Package release holds what scripts/release ships besides the binaries, and
// its test.
//
// npm/ is the npm package @pickup-dev/pickup's own code: install.js, the
// postinstall that puts this machine's native binaries in place of the
// launchers in bin/ (so that the `pickup` on the PATH is the binary itself),
// platform.js, which finds the platform package npm installed, and
// launcher.sh, the stand-in left when install scripts do not run: it execs
// the binary, so that no process of its own stays between pickup and what ran
// it (pickup ties a claim's lease to that). scripts/release writes the
// package.json files and packs them.
//
// The test runs scripts/release into a temporary directory (for this
// machine's platform only), checks the checksums and the archive, installs
// the npm packages into a fresh prefix with no network (a network namespace
// of its own where it can make one, else npm --offline with an empty cache
// and a registry that refuses connections), and runs pickup from that
// prefix's bin. Every binary must be static (no program interpreter), and
// pickup as installed must find its PostgreSQL helper, pickup-postgres,
// beside itself (it runs init --shared against a port that refuses and
// wants the database's exit 8, not a missing helper).
package release
