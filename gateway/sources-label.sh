#!/bin/sh
# sources-label.sh -- what the gateway image code-sandbox/gateway is built from: the first 16 hex
# digits of the SHA-256 of every file the program cs-gateway is compiled from (this folder's and
# shared/'s), the value of the image's label code-sandbox.sources.
#
# containers/build-images.sh sets the label and rebuilds an image whose label differs (an older
# checkout's gateway: the server and the gateway speak a protocol of their own that grows with
# both), and ./dev.sh counts such an image as missing. One place for both, so that a file the
# program is compiled from cannot be left out of one of them.
set -eu
here=$(dirname "$0")
cat "$here"/*.cpp "$here"/shared/*.cpp "$here"/*.h "$here"/shared/*.h | sha256sum | cut -c1-16
