#!/usr/bin/env node
// A stand-in for a native pickup binary: install.js (npm's postinstall)
// replaces this file with the binary itself, so that the command on the PATH
// starts no node process. It is left here only when install scripts did not
// run (npm --ignore-scripts); then it runs the binary, a little slower.
'use strict'

const path = require('path')
const { spawnSync } = require('child_process')

let platform
try {
  platform = require('../platform.js')
} catch (err) {
  console.error('pickup: ' + err.message)
  process.exit(1)
}

const name = path.basename(__filename)
let bin
try {
  bin = path.join(platform.platformDir(), 'bin', name)
} catch (err) {
  console.error(`${name}: error: ${err.message}`)
  process.exit(1)
}
const res = spawnSync(bin, process.argv.slice(2), { stdio: 'inherit' })
if (res.error) {
  console.error(`${name}: error: run ${bin}: ${res.error.message}`)
  process.exit(1)
}
if (res.signal) {
  process.kill(process.pid, res.signal)
}
process.exit(res.status === null ? 1 : res.status)
