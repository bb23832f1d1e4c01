# code-sandbox/gcc:latest for machines that reach a registry; same contents as the offline
# build in build-images.sh. Build from this directory:
#   docker build -f gcc.Dockerfile -t code-sandbox/gcc:latest \
#       --label code-sandbox.scripts="$(loaders/image-scripts.sh gcc)" \
#       --label code-sandbox.packages="$(./image-packages.sh gcc)" .
# (the labels name the scripts it carries in /usr/local/share/code-sandbox, see
# loaders/image-scripts.sh, and the package list it was built from, see image-packages.sh)
FROM debian:bookworm-slim

# Serves c and cpp.
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        gcc g++ libc6-dev \
    && apt-get clean \
    && rm -rf /var/lib/apt/lists/*

COPY cs-run /usr/local/bin/cs-run
RUN chmod 0755 /usr/local/bin/cs-run \
    && install -D -m 0644 /usr/local/bin/cs-run \
        "/usr/local/share/code-sandbox/cs-run-$(sha256sum < /usr/local/bin/cs-run | cut -c1-16)" \
    && groupadd --gid 1000 sandbox \
    && useradd --uid 1000 --gid 1000 --home-dir /sandbox --no-create-home \
        --shell /bin/sh --comment "Code Sandbox" sandbox \
    && install -d -m 0755 -o 1000 -g 1000 /sandbox /sandbox/outputs /opt/cs-libs \
    && ln -sfn /sandbox/.cs-workspace /workspace \
    && printf 'language=gcc\nbuilt=%s\ndebian=%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
        "$(cat /etc/debian_version)" > /etc/code-sandbox-image

LABEL org.opencontainers.image.title=code-sandbox-gcc
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/sandbox \
    LANG=C.UTF-8
USER 1000:1000
WORKDIR /sandbox
