# code-sandbox/go:latest for machines that reach a registry; same contents as the offline
# build in build-images.sh. Build from this directory:
#   docker build -f go.Dockerfile -t code-sandbox/go:latest \
#       --label code-sandbox.scripts="$(loaders/image-scripts.sh go)" \
#       --label code-sandbox.packages="$(./image-packages.sh go)" .
# (the labels name the scripts it carries in /usr/local/share/code-sandbox, see
# loaders/image-scripts.sh, and the package list it was built from, see image-packages.sh)
FROM debian:bookworm-slim

# Debian's standard library is compiled with cgo; with CGO_ENABLED=0 net, os/user and all above
# them would be recompiled into every run's GOCACHE, so reinstall them that way once here. The
# standard library's tests, Go's own test suite and the compiled cmd/... packages are never used.
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        golang-go ca-certificates \
    && apt-get clean \
    && rm -rf /var/lib/apt/lists/* \
    && CGO_ENABLED=0 GOCACHE=/tmp/go-build-cache go install std \
    && rm -rf /tmp/go-build-cache /usr/share/go-*/test /usr/lib/go-*/pkg/linux_*/cmd \
    && find /usr/share/go-*/src -type d -name testdata -prune -exec rm -rf {} + \
    && find /usr/share/go-*/src -type f -name '*_test.go' -delete

COPY cs-run /usr/local/bin/cs-run
RUN chmod 0755 /usr/local/bin/cs-run \
    && install -D -m 0644 /usr/local/bin/cs-run \
        "/usr/local/share/code-sandbox/cs-run-$(sha256sum < /usr/local/bin/cs-run | cut -c1-16)" \
    && groupadd --gid 1000 sandbox \
    && useradd --uid 1000 --gid 1000 --home-dir /sandbox --no-create-home \
        --shell /bin/sh --comment "Code Sandbox" sandbox \
    && install -d -m 0755 -o 1000 -g 1000 /sandbox /sandbox/outputs /opt/cs-libs \
    && ln -sfn /sandbox/.cs-workspace /workspace \
    && printf 'language=go\nbuilt=%s\ndebian=%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
        "$(cat /etc/debian_version)" > /etc/code-sandbox-image

LABEL org.opencontainers.image.title=code-sandbox-go
# go needs a writable build cache even for the standard library; there is no C compiler, so
# no cgo.
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/sandbox \
    LANG=C.UTF-8 \
    GOCACHE=/tmp/go-cache \
    GOPATH=/tmp/go \
    CGO_ENABLED=0 \
    GOFLAGS=-buildvcs=false
USER 1000:1000
WORKDIR /sandbox
