# code-sandbox/node:latest for machines that reach a registry; same contents as the offline
# build in build-images.sh. Build from this directory:
#   docker build -f node.Dockerfile -t code-sandbox/node:latest \
#       --label code-sandbox.scripts="$(loaders/image-scripts.sh node)" \
#       --label code-sandbox.packages="$(./image-packages.sh node)" .
# (the labels name the scripts it carries in /usr/local/share/code-sandbox, see
# loaders/image-scripts.sh, and the package list it was built from, see image-packages.sh)
FROM debian:bookworm-slim

# Serves javascript and typescript. Besides TypeScript, the modules assistants' programs require
# most that Debian has (the list in ../resources/languages.json, which build-images.sh reads): all
# in /usr/share/nodejs, on node's default module path, so require('lodash') works as it is.
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        nodejs npm node-typescript \
        node-lodash node-uuid node-js-yaml node-yaml node-axios node-moment node-cheerio \
        node-marked node-xml2js \
    && apt-get clean \
    && rm -rf /var/lib/apt/lists/*

# The loader, run from here rather than passed as text (see loaders/image-scripts.sh).
COPY loaders/node-loader.js /tmp/node-loader.js
RUN install -D -m 0644 /tmp/node-loader.js \
        "/usr/local/share/code-sandbox/node-loader-$(sha256sum < /tmp/node-loader.js | cut -c1-16).js" \
    && rm /tmp/node-loader.js

COPY cs-run /usr/local/bin/cs-run
RUN chmod 0755 /usr/local/bin/cs-run \
    && install -D -m 0644 /usr/local/bin/cs-run \
        "/usr/local/share/code-sandbox/cs-run-$(sha256sum < /usr/local/bin/cs-run | cut -c1-16)" \
    && groupadd --gid 1000 sandbox \
    && useradd --uid 1000 --gid 1000 --home-dir /sandbox --no-create-home \
        --shell /bin/sh --comment "Code Sandbox" sandbox \
    && install -d -m 0755 -o 1000 -g 1000 /sandbox /sandbox/outputs /opt/cs-libs \
    && ln -sfn /sandbox/.cs-workspace /workspace \
    && printf 'language=node\nbuilt=%s\ndebian=%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
        "$(cat /etc/debian_version)" > /etc/code-sandbox-image

LABEL org.opencontainers.image.title=code-sandbox-node
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/sandbox \
    LANG=C.UTF-8
USER 1000:1000
WORKDIR /sandbox
