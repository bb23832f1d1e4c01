#!/bin/bash
# Build the Debian package from a build directory and check it the way a user would meet it:
# its control fields, its file list, the binary run from the unpacked package, the desktop and
# AppStream files validated, and its dependencies resolved by apt.
#
#   packaging/test-package.sh BUILD_DIR
#
# The build directory must be configured and have bin/code-sandbox built. The package is left
# in BUILD_DIR/packaging/deb. Needs: cmake (cpack), dpkg-dev (dpkg-shlibdeps), binutils
# (readelf), desktop-file-utils, appstream, apt.
set -euo pipefail

APP_ID=io.github.codesandbox.CodeSandbox
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

die() { printf 'test-package: FATAL: %s\n' "$*" >&2; exit 1; }
failures=()
ok() { printf 'ok    %s\n' "$*"; }
bad() { printf 'FAIL  %s\n' "$*" >&2; failures+=("$*"); }
check() { # check DESCRIPTION COMMAND...: runs COMMAND, records the result
    local what=$1
    shift
    if "$@"; then ok "$what"; else bad "$what"; fi
}

[ $# -eq 1 ] || die "usage: $0 BUILD_DIR"
BUILD=$(cd "$1" && pwd) || die "no build directory $1"
[ -f "$BUILD/CPackConfig.cmake" ] || die "$BUILD/CPackConfig.cmake missing: configure with cmake first"
[ -x "$BUILD/bin/code-sandbox" ] || die "$BUILD/bin/code-sandbox missing: build the code-sandbox target first"

for tool in cpack:cmake dpkg-deb:dpkg dpkg-shlibdeps:dpkg-dev readelf:binutils \
            desktop-file-validate:desktop-file-utils appstreamcli:appstream apt-get:apt; do
    command -v "${tool%%:*}" >/dev/null || die "${tool%%:*} not found: apt-get install ${tool#*:}"
done

VERSION=$(sed -n 's/^set(CPACK_PACKAGE_VERSION "\(.*\)")$/\1/p' "$BUILD/CPackConfig.cmake")
[ -n "$VERSION" ] || die "no CPACK_PACKAGE_VERSION in $BUILD/CPackConfig.cmake"
# The one place the version is written: the top-level project() call. Everything below is
# checked against it.
PROJECT_VERSION=$(tr '\n' ' ' <"$SRC/CMakeLists.txt" \
    | sed -n 's/.*project([[:space:]]*CodeSandbox[[:space:]][^)]*VERSION[[:space:]]\+\([0-9.]\+\).*/\1/p')
[ -n "$PROJECT_VERSION" ] || die "no project(CodeSandbox VERSION ...) in $SRC/CMakeLists.txt"
RELEASE_DATE=$(sed -n 's/^set(CODE_SANDBOX_RELEASE_DATE \([0-9-]*\))$/\1/p' "$SRC/CMakeLists.txt")
SRC_APP_ID=$(sed -n 's/^set(CODE_SANDBOX_APP_ID \(.*\))$/\1/p' "$SRC/CMakeLists.txt")

OUT=$BUILD/packaging/deb
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

echo "== one version, one application id"
check "the package version is the project's ($PROJECT_VERSION)" test "$VERSION" = "$PROJECT_VERSION"
check "CMakeLists.txt sets the application id $APP_ID" test "$SRC_APP_ID" = "$APP_ID"
check "LICENSE is the Apache License 2.0 with the project's copyright line" \
    grep -q '^   Copyright 2026 The Code Sandbox authors$' "$SRC/LICENSE"
check "LICENSE is otherwise Debian's Apache-2.0 text, word for word" \
    cmp -s <(grep -v '^   Copyright ' "$SRC/LICENSE") \
           <(grep -v '^   Copyright ' /usr/share/common-licenses/Apache-2.0)

echo "== cpack -G DEB into $OUT"
rm -rf "$OUT"
(cd "$BUILD" && cpack -G DEB -B "$OUT" --config "$BUILD/CPackConfig.cmake") >"$TMP/cpack.log" 2>&1 || {
    cat "$TMP/cpack.log" >&2
    die "cpack failed"
}
shopt -s nullglob
debs=("$OUT"/*.deb)
shopt -u nullglob
[ ${#debs[@]} -eq 1 ] || die "expected one .deb in $OUT, found ${#debs[@]}"
DEB=${debs[0]}
ARCH=$(dpkg --print-architecture)
check "file name is code-sandbox_${VERSION}_${ARCH}.deb ($(basename "$DEB"))" \
    test "$(basename "$DEB")" = "code-sandbox_${VERSION}_${ARCH}.deb"
echo "   $(du -k "$DEB" | cut -f1) KiB"

echo "== control fields"
dpkg-deb --info "$DEB" >"$TMP/info" || die "dpkg-deb --info failed on $DEB"
field() { dpkg-deb --field "$DEB" "$1"; }
check "Package: code-sandbox" test "$(field Package)" = code-sandbox
check "Version: $VERSION" test "$(field Version)" = "$VERSION"
check "Section: devel" test "$(field Section)" = devel
check "Maintainer is set ($(field Maintainer))" test -n "$(field Maintainer)"
check "Description has a long part" test "$(field Description | wc -l)" -gt 3
DEPENDS=$(field Depends)
echo "   Depends: $DEPENDS"
DEPENDS_NAMES=$(tr ',|' '\n' <<<"$DEPENDS" | sed 's/^ *//; s/ .*//')
for dep in libc6 libstdc++6 libqt6core6 libqt6sql6 libqt6sql6-sqlite; do
    check "Depends on $dep" grep -Fxq "$dep" <<<"$DEPENDS_NAMES"
done
check "Recommends: docker.io | podman" test "$(field Recommends)" = "docker.io | podman"

echo "== contents"
dpkg-deb --contents "$DEB" >"$TMP/contents" || die "dpkg-deb --contents failed on $DEB"
has() { # has TYPE PATH [LINK_TARGET]: TYPE is the first letter of the tar listing's mode
    awk -v type="$1" -v path="./$2" -v target="${3:-}" '
        substr($1, 1, 1) == type && $6 == path && (target == "" || ($7 == "->" && $8 == target)) {
            found = 1 }
        END { exit !found }' "$TMP/contents"
}
check "/usr/bin/code-sandbox is a file" has - usr/bin/code-sandbox
check "/usr/bin/code-sandbox-mcp -> code-sandbox" has l usr/bin/code-sandbox-mcp code-sandbox
check "/usr/share/applications/$APP_ID.desktop" has - "usr/share/applications/$APP_ID.desktop"
check "/usr/share/metainfo/$APP_ID.metainfo.xml" has - "usr/share/metainfo/$APP_ID.metainfo.xml"
for icon in scalable/apps/$APP_ID.svg 256x256/apps/$APP_ID.png 128x128/apps/$APP_ID.png \
            64x64/apps/$APP_ID.png 48x48/apps/$APP_ID.png; do
    check "/usr/share/icons/hicolor/$icon" has - "usr/share/icons/hicolor/$icon"
done
check "/usr/share/doc/code-sandbox/copyright" has - usr/share/doc/code-sandbox/copyright
stray=$(awk '$6 !~ /^\.\/usr\/(bin|share)\// && substr($1, 1, 1) != "d" { print $6 }' "$TMP/contents")
check "nothing outside /usr/bin and /usr/share${stray:+ (found: $stray)}" test -z "$stray"

echo "== the unpacked package"
ROOT=$TMP/root
dpkg -x "$DEB" "$ROOT" || die "dpkg -x failed on $DEB"
BIN=$ROOT/usr/bin/code-sandbox
# A display is not needed to print the version or the help, whatever the binary links.
export QT_QPA_PLATFORM=offscreen
check "code-sandbox --version prints 'code-sandbox $VERSION'" \
    test "$("$BIN" --version 2>&1)" = "code-sandbox $VERSION"
check "code-sandbox-mcp --version (through the symlink)" \
    test "$("$ROOT/usr/bin/code-sandbox-mcp" --version 2>&1)" = "code-sandbox $VERSION"
"$BIN" --help >"$TMP/help" 2>&1 || bad "code-sandbox --help exits $?"
check "code-sandbox --help shows the usage" grep -q '^Usage: ' "$TMP/help"
check "the packaged copyright file is LICENSE" cmp -s "$SRC/LICENSE" "$ROOT/usr/share/doc/code-sandbox/copyright"
check "code-sandbox --help names --stdio" grep -q -- '--stdio' "$TMP/help"
# rcc stores a PNG as it is; a static library's resources are lost unless something links them in.
contains() { perl -e 'local $/; open my $n, "<:raw", $ARGV[0] or die "$ARGV[0]: $!\n";
    open my $h, "<:raw", $ARGV[1] or die "$ARGV[1]: $!\n"; exit(index(<$h>, <$n>) < 0 ? 1 : 0)' "$@"; }
check "code-sandbox carries its icon (:/icons/code-sandbox.png)" \
    contains "$SRC/resources/icons/code-sandbox-256.png" "$BIN"
stripped() { local sections; sections=$(readelf -S "$1") && ! grep -q '\.debug_info' <<<"$sections"; }
check "code-sandbox is stripped (no .debug_info)" stripped "$BIN"

echo "== desktop entry and AppStream metadata"
DESKTOP=$ROOT/usr/share/applications/$APP_ID.desktop
METAINFO=$ROOT/usr/share/metainfo/$APP_ID.metainfo.xml
if desktop-file-validate "$DESKTOP" >"$TMP/dfv" 2>&1 && ! [ -s "$TMP/dfv" ]; then
    ok "desktop-file-validate"
else
    cat "$TMP/dfv" >&2
    bad "desktop-file-validate"
fi
key() { sed -n "s/^$1=//p" "$DESKTOP"; }
metadata() { # id | license | launchable | release: a field of the installed metadata
    python3 - "$METAINFO" "$1" <<'PY'
import sys, xml.etree.ElementTree as ET
c = ET.parse(sys.argv[1]).getroot()
key = sys.argv[2]
if key == "release":
    r = c.find("releases/release")
    print(r.get("version"), r.get("date"))
else:
    print(c.findtext({"id": "id", "license": "project_license", "launchable": "launchable"}[key]))
PY
}
check "metainfo <id> is $APP_ID" test "$(metadata id)" = "$APP_ID"
check "metainfo launches $APP_ID.desktop" test "$(metadata launchable)" = "$APP_ID.desktop"
check "metainfo project_license is Apache-2.0" test "$(metadata license)" = Apache-2.0
check "metainfo's newest release is $PROJECT_VERSION of $RELEASE_DATE ($(metadata release))" \
    test "$(metadata release)" = "$PROJECT_VERSION $RELEASE_DATE"
# QStringLiteral keeps it as UTF-16.
printf '%s' "$APP_ID" | iconv -f ascii -t utf-16le >"$TMP/app-id.utf16"
check "the window's desktop file name is $APP_ID (in the binary)" contains "$TMP/app-id.utf16" "$BIN"
check "desktop Exec=code-sandbox is in the package" test -x "$ROOT/usr/bin/$(key Exec | cut -d' ' -f1)"
check "desktop Icon=$(key Icon) is the installed icon" \
    test -f "$ROOT/usr/share/icons/hicolor/scalable/apps/$(key Icon).svg"
if appstreamcli validate --no-net --no-color "$METAINFO" >"$TMP/as" 2>&1; then
    ok "appstreamcli validate --no-net"
else
    cat "$TMP/as" >&2
    bad "appstreamcli validate --no-net"
fi
# validate-tree also ties the metainfo to the desktop file and icon it names.
if appstreamcli validate-tree --no-net --no-color "$ROOT" >"$TMP/astree" 2>&1; then
    ok "appstreamcli validate-tree --no-net"
else
    cat "$TMP/astree" >&2
    bad "appstreamcli validate-tree --no-net"
fi

echo "== dependencies resolve"
if apt-get install --simulate --no-install-recommends "$DEB" >"$TMP/apt" 2>&1 \
        && grep -Eq '^Inst code-sandbox |code-sandbox is already the newest' "$TMP/apt"; then
    ok "apt-get install --simulate $(basename "$DEB")"
else
    cat "$TMP/apt" >&2
    bad "apt-get install --simulate $(basename "$DEB")"
fi

if [ ${#failures[@]} -gt 0 ]; then
    printf '\ntest-package: %d check(s) FAILED:\n' ${#failures[@]} >&2
    printf '  - %s\n' "${failures[@]}" >&2
    exit 1
fi
echo
echo "test-package: all checks passed: $DEB"
