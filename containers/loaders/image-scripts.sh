#!/bin/sh
# image-scripts.sh IMAGE -- the scripts of ours that the image code-sandbox/IMAGE carries in
# /usr/local/share/code-sandbox, comma-separated: the value of its label code-sandbox.scripts.
#
# Each is named by the first 16 hex digits of the SHA-256 of its text, as the server's
# ImageScripts names them: cs-run-<hash> (every image), python-loader-<hash>.bin (python, compiled
# by install-python-loader.sh) and node-loader-<hash>.js (node). For an image whose label names
# the server's own, a sandbox's command runs these files instead of holding their text, which the
# engine would otherwise store and pass on for every container. build-images.sh sets the label
# (and rebuilds an image whose label names other scripts); a Dockerfile build sets it with
#   docker build --label code-sandbox.scripts="$(loaders/image-scripts.sh python)" ...
set -eu
[ $# = 1 ] || { echo "usage: image-scripts.sh IMAGE" >&2; exit 2; }
here=$(dirname "$0")
hash() { sha256sum "$1" | cut -c1-16; }
names="cs-run-$(hash "$here/../cs-run")"
case $1 in
    python) names="$names,python-loader-$(hash "$here/python-loader.py").bin" ;;
    node) names="$names,node-loader-$(hash "$here/node-loader.js").js" ;;
esac
echo "$names"
