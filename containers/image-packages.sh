#!/bin/sh
# image-packages.sh IMAGE -- what the language table (resources/languages.json, or
# CODE_SANDBOX_LANGUAGES) builds the image code-sandbox/IMAGE from: the first 16 hex digits of the
# SHA-256 of its packages, stubs and environment, the value of its label code-sandbox.packages.
# Empty for an image the table does not have (the gateway).
#
# build-images.sh sets the label and rebuilds an image whose label differs, and ./dev.sh counts
# such an image as missing: after a checkout that adds a library, the image gets it, as the
# server's tools (which read the same table) say it has.
set -eu
[ $# = 1 ] || { echo "usage: image-packages.sh IMAGE" >&2; exit 2; }
here=$(dirname "$0")
exec python3 - "${CODE_SANDBOX_LANGUAGES:-$here/../resources/languages.json}" "$1" <<'PY'
import hashlib, json, sys
with open(sys.argv[1]) as f:
    table = json.load(f)
image = next((i for i in table["images"] if i["name"] == sys.argv[2]), None)
if image is not None:
    what = json.dumps({k: image.get(k, []) for k in ("packages", "stubs", "env")}, sort_keys=True)
    print(hashlib.sha256(what.encode()).hexdigest()[:16])
PY
