#!/bin/sh
# A stand-in for a native binary of @PACKAGE@: install.js (npm's
# postinstall) puts the binary itself in its place. It is left here only when
# install scripts did not run (npm --ignore-scripts, or a policy that blocks
# them); then it finds the binary in the platform package npm installed and
# execs it. exec, not a child: pickup ties a claim's lease to the process that
# ran it, and a launcher that waited for pickup (a node wrapper does) would
# be that process, gone as soon as pickup returns, and the claim taken from a
# live worker. scripts/release fills in @PACKAGE@ and @VERSION@.
self=$0
# npm links bin/<name> onto the PATH as a symbolic link: follow it to this
# package. Few commands: each is a process, at every start.
while [ -L "$self" ]; do
	link=$(readlink -- "$self") || break
	case $link in
	/*) self=$link ;;
	*) self=${self%/*}/$link ;;
	esac
done
case $self in
*/*) bin=${self%/*} ;;
*) bin=. ;;
esac
name=${self##*/}
sm=$(uname -sm)
case ${sm% *} in
Linux) os=linux ;;
Darwin) os=darwin ;;
*) os=${sm% *} ;;
esac
case ${sm#* } in
x86_64 | amd64) cpu=x64 ;;
aarch64 | arm64) cpu=arm64 ;;
*) cpu=${sm#* } ;;
esac
platform=@PACKAGE@-$os-$cpu
# Where npm puts the platform package: in this package's node_modules, or
# beside it (an install of both .tgz files, or a flat node_modules).
for dir in "$bin/../node_modules/$platform" "$bin/../../${platform##*/}"; do
	[ -x "$dir/bin/$name" ] || continue
	# Only this version's binary: another one's may not match these hooks.
	version=
	while IFS= read -r line; do
		case $line in
		*'"version": "@VERSION@"'*) version=@VERSION@ ;;
		esac
	done <"$dir/package.json"
	if [ "$version" != @VERSION@ ]; then
		echo "$name: error: $dir is not version @VERSION@ of $platform: install both at one version: npm install -g @PACKAGE@@@VERSION@" >&2
		exit 1
	fi
	exec "$dir/bin/$name" "$@"
done
echo "$name: error: $platform is not installed, so $name has no binary here (npm skips optional dependencies with --omit=optional, and packages for other systems): install it again with npm install -g @PACKAGE@, or another way: pickup help install, https://github.com/pickup-dev/pickup#install" >&2
exit 1
