package release

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"debug/elf"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// testVersion is stamped by the release the test builds; every binary it
// installs must say it.
const testVersion = "v9.8.7-test.1"

// repoRoot is the top of the checkout, two levels above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func need(t *testing.T, programs ...string) {
	t.Helper()
	for _, p := range programs {
		if _, err := exec.LookPath(p); err != nil {
			t.Fatalf("%s is not on the PATH: the release test runs it (scripts/test installs node and npm when missing)", p)
		}
	}
}

// shipped lists the binaries the release must hold: pickup, and beside it
// pickup-board (the live board), pickup-mcp (the MCP server), pickup-web
// (the web board) and pickup-postgres (the PostgreSQL board's helper),
// each once its main package exists (scripts/release's list).
func shipped(t *testing.T) []string {
	t.Helper()
	names := []string{"pickup"}
	for _, name := range []string{"pickup-board", "pickup-mcp", "pickup-web", "pickup-postgres"} {
		if _, err := os.Stat(filepath.Join(repoRoot(t), "internal", "cmd", name)); err == nil {
			names = append(names, name)
		}
	}
	return names
}

func TestRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds pickup and installs it with npm (20 s to a few minutes)")
	}
	need(t, "bash", "go", "tar", "gzip", "node", "npm")
	root := repoRoot(t)
	dir := t.TempDir()
	platform := runtime.GOOS + "/" + runtime.GOARCH
	npmPlatform := runtime.GOOS + "-" + strings.Replace(runtime.GOARCH, "amd64", "x64", 1)

	start := time.Now()
	cmd := exec.Command(filepath.Join(root, "scripts", "release"), dir)
	cmd.Env = append(os.Environ(), "PICKUP_VERSION="+testVersion, "PICKUP_RELEASE_PLATFORMS="+platform)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/release: %v\n%s", err, out)
	} else {
		t.Logf("scripts/release for %s took %v:\n%s", platform, time.Since(start).Round(time.Millisecond), out)
	}

	v := strings.TrimPrefix(testVersion, "v")
	archive := filepath.Join(dir, fmt.Sprintf("pickup_%s_%s.tar.gz", runtime.GOOS, runtime.GOARCH))
	rootPkg := filepath.Join(dir, "pickup-dev-pickup-"+v+".tgz")
	platformPkg := filepath.Join(dir, "pickup-dev-pickup-"+npmPlatform+"-"+v+".tgz")

	t.Run("checksums", func(t *testing.T) {
		checkChecksums(t, dir, filepath.Join(dir, "pickup_checksums.txt"),
			[]string{archive, rootPkg, platformPkg})
	})

	// The archive's binaries, which the npm packages must hold too.
	files := readTarGz(t, archive)
	extracted := t.TempDir()
	for _, name := range shipped(t) {
		if err := os.WriteFile(filepath.Join(extracted, name), files[name].data, 0o755); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("archive", func(t *testing.T) {
		want := append(shipped(t), "README.md", "LICENSE")
		var got []string
		for name := range files {
			got = append(got, name)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("%s holds %v, want %v", filepath.Base(archive), got, want)
		}
		for _, f := range []string{"README.md", "LICENSE"} {
			if data, err := os.ReadFile(filepath.Join(root, f)); err != nil {
				t.Fatal(err)
			} else if !bytes.Equal(files[f].data, data) {
				t.Errorf("%s in %s differs from the repository's", f, filepath.Base(archive))
			}
		}
		for _, name := range shipped(t) {
			if files[name].mode&0o111 != 0o111 {
				t.Errorf("%s in the archive has mode %o, want executable", name, files[name].mode)
			}
		}
		checkVersion(t, filepath.Join(extracted, "pickup"))
		for _, name := range shipped(t) {
			checkStatic(t, filepath.Join(extracted, name))
		}
		checkFindsHelper(t, filepath.Join(extracted, "pickup"))
	})

	t.Run("npm", func(t *testing.T) {
		prefix := npmInstall(t, rootPkg, platformPkg)
		for _, name := range shipped(t) {
			onPath := filepath.Join(prefix, "bin", name)
			// The command on the PATH is the native binary itself, byte for
			// byte the archive's: no node launcher starts in between.
			target, err := filepath.EvalSymlinks(onPath)
			if err != nil {
				t.Fatalf("%s: %v", onPath, err)
			}
			got, err := os.ReadFile(target)
			if err != nil {
				t.Fatal(err)
			}
			if want, err := os.ReadFile(filepath.Join(extracted, name)); err != nil {
				t.Fatal(err)
			} else if !bytes.Equal(got, want) {
				t.Errorf("%s (-> %s) is not the native %s binary (starts %q): install.js did not put it in place of the launcher",
					onPath, target, name, got[:min(len(got), 20)])
			}
		}
		checkVersion(t, filepath.Join(prefix, "bin", "pickup"))
		checkFindsHelper(t, filepath.Join(prefix, "bin", "pickup"))
	})

	t.Run("npm-registry", func(t *testing.T) {
		// What README gives: npm install -g @pickup-dev/pickup, from a
		// registry (a stand-in on 127.0.0.1 serving the packed files): npm
		// installs the platform package as an optional dependency, inside
		// the root package, and nothing else.
		reg := newRegistry(t, rootPkg, platformPkg)
		prefix := t.TempDir()
		cmd := exec.Command("npm", "install", "-g", "--prefix", prefix,
			"--cache", filepath.Join(prefix, ".npm-cache"), "--registry", reg.URL+"/",
			"--userconfig", filepath.Join(prefix, ".npmrc"),
			"--no-audit", "--no-fund", "--no-update-notifier", "--loglevel=warn", "@pickup-dev/pickup@"+v)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
		}
		t.Logf("%s:\n%s", strings.Join(cmd.Args, " "), out)
		got, err := os.ReadFile(filepath.Join(prefix, "bin", "pickup"))
		if err != nil {
			t.Fatal(err)
		}
		if want, err := os.ReadFile(filepath.Join(extracted, "pickup")); err != nil {
			t.Fatal(err)
		} else if !bytes.Equal(got, want) {
			t.Errorf("%s is not the native binary (starts %q)", filepath.Join(prefix, "bin", "pickup"), got[:min(len(got), 20)])
		}
		checkVersion(t, filepath.Join(prefix, "bin", "pickup"))
	})

	t.Run("npm-ignore-scripts", func(t *testing.T) {
		// Without install scripts, bin/pickup stays the sh launcher: it
		// must still run the platform package's binary, and exec it.
		prefix := npmInstall(t, "--ignore-scripts", rootPkg, platformPkg)
		onPath := filepath.Join(prefix, "bin", "pickup")
		head := make([]byte, 9)
		if f, err := os.Open(onPath); err != nil {
			t.Fatal(err)
		} else {
			_, _ = io.ReadFull(f, head)
			f.Close()
		}
		if string(head) != "#!/bin/sh" {
			t.Fatalf("%s starts %q: with --ignore-scripts it should be the sh launcher", onPath, head)
		}
		checkVersion(t, onPath)
		checkFindsHelper(t, onPath)
		checkExecs(t, onPath, filepath.Join(prefix, "lib", "node_modules", "@pickup-dev", "pickup-"+npmPlatform, "bin", "pickup"))
	})
}

// checkExecs starts launcher with a command that blocks (next --wait on an
// empty board) and checks that the process it started becomes the native
// binary: the launcher execs it, so no process of its own sits between
// pickup and what ran it. pickup ties a claim's lease to its invoker; a
// launcher that waited for pickup (a node wrapper) would be that invoker,
// gone when pickup returns, and the claim of a live worker would be reaped.
func checkExecs(t *testing.T, launcher, native string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Log("no /proc: not checking that the launcher execs")
		return
	}
	board := filepath.Join(t.TempDir(), "board")
	if out, err := exec.Command(launcher, "--dir", board, "init").CombinedOutput(); err != nil {
		t.Fatalf("%s init: %v\n%s", launcher, err, out)
	}
	cmd := exec.Command(launcher, "--dir", board, "--owner", "waiter", "next", "--wait=30s")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	want, err := filepath.EvalSymlinks(native)
	if err != nil {
		t.Fatal(err)
	}
	var exe string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		exe, _ = os.Readlink(fmt.Sprintf("/proc/%d/exe", cmd.Process.Pid))
		if exe == want {
			return
		}
	}
	t.Errorf("the process %s started runs %s, want %s itself: the launcher must exec the binary", launcher, exe, want)
}

// npmInstall installs the given files (and flags) with npm install -g into
// a fresh prefix, without a network, and returns the prefix.
func npmInstall(t *testing.T, args ...string) string {
	t.Helper()
	prefix := t.TempDir()
	// A port that refuses connections: chosen free, then closed.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadRegistry := "http://" + l.Addr().String() + "/"
	l.Close()
	npmArgs := append([]string{"install", "-g", "--prefix", prefix, "--offline",
		"--cache", filepath.Join(prefix, ".npm-cache"), "--registry", deadRegistry,
		"--userconfig", filepath.Join(prefix, ".npmrc"),
		"--no-audit", "--no-fund", "--no-update-notifier", "--loglevel=warn"}, args...)
	var cmd *exec.Cmd
	if noNetwork() {
		// A network namespace of its own: no interface but a loopback that
		// is down. Nothing it does can reach a network.
		cmd = exec.Command("unshare", append([]string{"--net", "npm"}, npmArgs...)...)
	} else {
		t.Log("no network namespace here (not root, or no unshare): npm runs --offline with an empty cache and a dead registry")
		cmd = exec.Command("npm", npmArgs...)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	t.Logf("%s:\n%s", strings.Join(cmd.Args, " "), out)
	return prefix
}

// noNetwork reports whether commands can be run in a network namespace of
// their own (unshare --net: root, on Linux).
func noNetwork() bool {
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		return false
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		return false
	}
	return exec.Command("unshare", "--net", "true").Run() == nil
}

func checkVersion(t *testing.T, exe string) {
	t.Helper()
	out, err := exec.Command(exe, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --version: %v\n%s", exe, err, out)
	}
	if !strings.HasPrefix(string(out), "pickup version "+testVersion+" (") {
		t.Errorf("%s --version printed %q, want the stamped version %s", exe, out, testVersion)
	}
}

func checkChecksums(t *testing.T, dir, sums string, want []string) {
	t.Helper()
	f, err := os.Open(sums)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var listed []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// sha256sum's format: the hex digest, two spaces, the file name.
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("%s: line %q is not in sha256sum's format", sums, sc.Text())
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%s names %s: %v", sums, name, err)
		}
		h := sha256.Sum256(data)
		if hex.EncodeToString(h[:]) != sum {
			t.Errorf("%s: the SHA-256 of %s is %x, the file says %s", sums, name, h, sum)
		}
		listed = append(listed, name)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != filepath.Base(sums) && !slices.Contains(listed, e.Name()) {
			t.Errorf("%s is not in %s", e.Name(), filepath.Base(sums))
		}
	}
	for _, w := range want {
		if !slices.Contains(listed, filepath.Base(w)) {
			t.Errorf("%s is missing from %s", filepath.Base(w), filepath.Base(sums))
		}
	}
}

type tarFile struct {
	mode int64
	data []byte
}

func readTarGz(t *testing.T, path string) map[string]tarFile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	files := map[string]tarFile{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatalf("%s: %s: %v", path, h.Name, err)
		}
		files[h.Name] = tarFile{mode: h.Mode, data: data}
	}
	return files
}

// newRegistry serves the given npm .tgz files the way the npm registry does
// (a packument per package name, the tarballs), on 127.0.0.1.
func newRegistry(t *testing.T, tgzs ...string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	packuments := map[string][]byte{}
	for _, tgz := range tgzs {
		data, err := os.ReadFile(tgz)
		if err != nil {
			t.Fatal(err)
		}
		var manifest map[string]any
		if err := json.Unmarshal(readTgzFile(t, tgz, "package/package.json"), &manifest); err != nil {
			t.Fatalf("%s: package.json: %v", tgz, err)
		}
		name, version := manifest["name"].(string), manifest["version"].(string)
		sha1sum := sha1.Sum(data)
		sha512sum := sha512.Sum512(data)
		file := "/tarballs/" + filepath.Base(tgz)
		manifest["_id"] = name + "@" + version
		manifest["dist"] = map[string]string{
			"tarball":   srv.URL + file,
			"shasum":    hex.EncodeToString(sha1sum[:]),
			"integrity": "sha512-" + base64.StdEncoding.EncodeToString(sha512sum[:]),
		}
		packument, err := json.Marshal(map[string]any{
			"name":      name,
			"dist-tags": map[string]string{"latest": version},
			"versions":  map[string]any{version: manifest},
		})
		if err != nil {
			t.Fatal(err)
		}
		packuments[name] = packument
		mux.HandleFunc(file, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(data) })
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		// npm asks for /@scope%2fname: the path arrives unescaped.
		name := strings.TrimPrefix(r.URL.Path, "/")
		p, ok := packuments[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(p)
	})
	return srv
}

// readTgzFile returns one file of a .tgz.
func readTgzFile(t *testing.T, tgz, name string) []byte {
	t.Helper()
	f, ok := readTarGz(t, tgz)[name]
	if !ok {
		t.Fatalf("%s holds no %s", tgz, name)
	}
	return f.data
}

// checkStatic fails if exe (an ELF binary, on Linux) asks for a dynamic
// loader: the release's binaries must run on any Linux, with no libc of a
// given version (pickup-postgres links package net: CGO_ENABLED=0 keeps
// its resolver pure Go).
func checkStatic(t *testing.T, exe string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		return
	}
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatalf("%s: %v", exe, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s is dynamically linked (it has a program interpreter): build it with CGO_ENABLED=0", filepath.Base(exe))
		}
	}
}

// checkFindsHelper runs pickup on a PostgreSQL board with nothing on the
// PATH but the system's: it must find pickup-postgres beside itself as
// installed, and so fail on the database (which refuses: exit 8), not on a
// missing helper. No server and no network are needed.
func checkFindsHelper(t *testing.T, pickup string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(repoRoot(t), "internal", "cmd", "pickup-postgres")); err != nil {
		return
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "postgres://pickup@" + l.Addr().String() + "/work?sslmode=disable&connect_timeout=5"
	l.Close() // a port that refuses connections
	home := t.TempDir()
	cmd := exec.Command(pickup, "--dir", filepath.Join(home, "board"), "init", "--shared", url)
	cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin", "PICKUP_PG_DAEMON=0"}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 8 || strings.Contains(string(out), "not found") {
		t.Errorf("%s init --shared on a database that refuses: %v, want exit 8 from the database (pickup-postgres found beside pickup)\n%s", pickup, err, out)
	}
}
