#!/bin/sh
# stub-package.sh NAME... -- installs one empty Debian package, code-sandbox-stubs, that provides
# the packages NAME...: apt then counts their dependents' dependencies on them as met and never
# installs them. Run as root in the system being built (build-images.sh runs it in its chroot,
# the Dockerfiles in a RUN), before apt-get installs what depends on them.
#
# For build-time tools that a package names as a run-time dependency: python3-scipy depends on
# python3-pythran, the compiler that turned some of scipy's Python into C++ extensions when scipy
# was built; the extensions need none of it to run, but pythran depends on g++, boost and
# python3-all-dev (about 1 GB). Only unversioned dependencies are met this way (the package
# provides no version); build-images.sh checks afterwards that apt did not install a real one.
#
# Needs only dpkg-deb and dpkg (in every Debian, minbase included): no equivs, no network.
set -eu
[ $# -gt 0 ] || { echo "usage: stub-package.sh NAME..." >&2; exit 2; }
dir=$(mktemp -d /tmp/cs-stubs.XXXXXX)
trap 'rm -rf "$dir"' EXIT
mkdir -m 0755 "$dir/pkg" "$dir/pkg/DEBIAN"
provides=$(printf '%s\n' "$@" | paste -s -d, - | sed 's/,/, /g')
cat > "$dir/pkg/DEBIAN/control" <<EOF
Package: code-sandbox-stubs
Version: 1
Architecture: all
Maintainer: Code Sandbox <code-sandbox@localhost>
Priority: optional
Section: misc
Provides: $provides
Description: empty stand-ins for build-time dependencies of the sandbox's packages
 Installed by Code Sandbox's image builder (containers/stub-package.sh) so that apt counts
 these packages as present without installing them: $provides.
 Their dependents need them only to be built, not to run.
EOF
dpkg-deb --root-owner-group --build "$dir/pkg" "$dir/code-sandbox-stubs.deb" > /dev/null
dpkg -i "$dir/code-sandbox-stubs.deb"
