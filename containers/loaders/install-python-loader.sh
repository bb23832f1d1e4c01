#!/bin/sh
# install-python-loader.sh LOADER -- run in the python image as it is built (build-images.sh in
# its chroot, python.Dockerfile): compiles the Python loader with the image's own Python into
# /usr/local/share/code-sandbox/python-loader-<hash>.bin, <hash> being the first 16 hex digits of
# the SHA-256 of its text. The server's boot script (python-boot.py) runs that copy when the hash
# is that of the loader it sends, and compiles the text sent otherwise, as this does ("<string>",
# as `python3 -c` names it).
set -eu
loader=$1
out=/usr/local/share/code-sandbox/python-loader-$(sha256sum "$loader" | cut -c1-16).bin
mkdir -p /usr/local/share/code-sandbox
python3 - "$loader" "$out" <<'PY'
import marshal
import sys

with open(sys.argv[1], "rb") as f:
    code = compile(f.read(), "<string>", "exec")
with open(sys.argv[2], "wb") as f:
    f.write(marshal.dumps(code))
PY
chmod 0644 "$out"
