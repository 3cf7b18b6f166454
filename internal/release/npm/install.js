// npm's postinstall of @pickup-dev/pickup: puts this machine's native
// binaries (from the optional dependency @pickup-dev/pickup-<os>-<cpu>) in
// place of the sh launchers in bin/ (launcher.sh), the way esbuild does. npm
// has linked bin/<name> onto the PATH already; after this, running it runs
// the binary directly: Claude Code's hooks start pickup at every tool call,
// and even the launcher's exec costs each one a shell and two commands.
// Nothing is downloaded: npm installed the platform package like any
// other.
'use strict'

const fs = require('fs')
const path = require('path')
const { execFileSync } = require('child_process')
const platform = require('./platform.js')

function place(src, dest) {
  // Placed already (npm rebuild): rename(2) between two links of one file
  // does nothing and would leave the temporary name behind.
  try {
    const a = fs.statSync(src)
    const b = fs.statSync(dest)
    if (a.ino === b.ino && a.dev === b.dev) {
      return
    }
  } catch {
    // No dest yet: place it.
  }
  // A temporary name, then a rename over the launcher: at no moment is there
  // no bin/<name>. A hard link costs no space; across file systems, a copy.
  const tmp = dest + '.tmp-' + process.pid
  try {
    fs.linkSync(src, tmp)
  } catch {
    fs.copyFileSync(src, tmp)
  }
  fs.chmodSync(tmp, 0o755)
  fs.renameSync(tmp, dest)
}

function main() {
  let dir
  try {
    dir = platform.platformDir()
  } catch (err) {
    console.error('[@pickup-dev/pickup postinstall] ' + err.message)
    // An unsupported machine, or optional dependencies omitted on purpose:
    // the launchers stay and say what is missing when run. Otherwise fail the
    // install loudly rather than leave a pickup that cannot start.
    const omitted = (process.env.npm_config_omit || '').includes('optional')
    if (err.code !== 'PICKUP_UNSUPPORTED' && !omitted) {
      process.exitCode = 1
    }
    return
  }
  for (const name of platform.binaries()) {
    const src = path.join(dir, 'bin', name)
    const dest = path.join(__dirname, 'bin', name)
    place(src, dest)
  }
  // The binary must start here (right platform, not damaged).
  const first = path.join(__dirname, 'bin', platform.binaries()[0])
  try {
    execFileSync(first, ['--version'], { stdio: 'pipe' })
  } catch (err) {
    console.error(`[@pickup-dev/pickup postinstall] ${first} --version failed: ${err.message}`)
    process.exitCode = 1
  }
}

main()
