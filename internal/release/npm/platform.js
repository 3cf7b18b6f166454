// Finds the native binaries of @pickup-dev/pickup for this machine: they are
// in the package @pickup-dev/pickup-<platform>-<cpu> that npm installed as an
// optional dependency (its "os" and "cpu" fields make npm skip the others).
// Used by install.js (postinstall).
'use strict'

const fs = require('fs')
const path = require('path')

const root = require('./package.json')

// The platforms scripts/release builds, as npm names them.
const supported = Object.keys(root.optionalDependencies || {})

function platformPackage() {
  return root.name + '-' + process.platform + '-' + process.arch
}

// tgz is the file npm pack makes of package name at this version.
function tgz(name) {
  return name.replace(/^@/, '').replace('/', '-') + '-' + root.version + '.tgz'
}

// The directory of the platform package at exactly this package's version:
// beside this package (npm installs it there, or in this package's own
// node_modules; an `npm install -g` of both .tgz files puts them side by
// side). A copy of another version is refused: its binary is not ours.
function platformDir() {
  const name = platformPackage()
  if (!supported.includes(name)) {
    const err = new Error(
      `pickup has no binary for ${process.platform} ${process.arch} in this package ` +
        `(it has ${supported.map((p) => p.slice(root.name.length + 1)).join(', ')}). ` +
        'Install it another way: go install github.com/pickup-dev/pickup@latest')
    err.code = 'PICKUP_UNSUPPORTED'
    throw err
  }
  let manifest
  try {
    manifest = require.resolve(name + '/package.json', { paths: [__dirname] })
  } catch {
    const err = new Error(
      `${name} is not installed, so pickup has no binary here ` +
        '(npm skips optional dependencies with --omit=optional or --no-optional). ' +
        `Install it again: npm install -g ${root.name}; from release files, name both: ` +
        `npm install -g ${tgz(root.name)} ${tgz(name)}`)
    err.code = 'PICKUP_MISSING'
    throw err
  }
  const version = JSON.parse(fs.readFileSync(manifest, 'utf8')).version
  if (version !== root.version) {
    const err = new Error(
      `${path.dirname(manifest)} is version ${version}, not ${root.version}: ` +
        `install both at one version: npm install -g ${root.name}@${root.version}`)
    err.code = 'PICKUP_MISMATCH'
    throw err
  }
  return path.dirname(manifest)
}

// The binaries this package ships: its "bin" field.
function binaries() {
  return Object.keys(root.bin || {})
}

module.exports = { platformDir, binaries }
