# code-sandbox/python:latest for machines that reach a registry; same contents as the offline
# build in build-images.sh. Build from this directory:
#   docker build -f python.Dockerfile -t code-sandbox/python:latest \
#       --label code-sandbox.scripts="$(loaders/image-scripts.sh python)" \
#       --label code-sandbox.packages="$(./image-packages.sh python)" .
# (the labels name the scripts it carries in /usr/local/share/code-sandbox, see
# loaders/image-scripts.sh, and the package list it was built from, see image-packages.sh)
#
# Based on debian:bookworm-slim rather than python:3.11-slim-bookworm: that image's python3 lives
# in /usr/local and does not see Debian's python3-numpy & co., which are the point of this image.
FROM debian:bookworm-slim

# The libraries assistants' programs import most, all Debian's (the list in
# ../resources/languages.json, which build-images.sh reads), and python3-dill, with which the
# loader pickles a session's variables for its snapshots (see _operation). python3-scipy depends on
# python3-pythran, a compiler needed only to build scipy, which pulls in g++, boost and
# python3-all-dev (about 1 GB): stub-package.sh first installs an empty package that provides it.
# The libraries' own test suites are about a fifth of the image and never imported. matplotlib's
# font list is built once here; the server copies it into MPLCONFIGDIR.
COPY stub-package.sh /tmp/stub-package.sh
RUN sh /tmp/stub-package.sh python3-pythran && rm /tmp/stub-package.sh \
    && apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        python3 python3-numpy python3-pandas python3-matplotlib python3-pil \
        fonts-dejavu-core python3-pip \
        python3-scipy python3-seaborn python3-sklearn python3-statsmodels python3-sympy \
        python3-networkx python3-requests python3-bs4 python3-lxml python3-openpyxl \
        python3-xlsxwriter python3-tabulate python3-yaml python3-dateutil python3-tz \
        python3-tqdm python3-jinja2 python3-docx python3-pypdf python3-reportlab \
        python3-dill \
    && ! dpkg-query -W -f '${Status}\n' python3-pythran 2> /dev/null | grep -q ' installed$' \
    && apt-get clean \
    && rm -rf /var/lib/apt/lists/* \
    && find /usr/lib/python3/dist-packages -type d -name tests -prune -exec rm -rf {} + \
    && mkdir -p /usr/local/share/code-sandbox/matplotlib \
    && MPLCONFIGDIR=/usr/local/share/code-sandbox/matplotlib MPLBACKEND=Agg \
        python3 -c 'import matplotlib.font_manager' \
    && chmod -R a+rX,go-w /usr/local/share/code-sandbox

# The loader compiled by this image's Python (see loaders/install-python-loader.sh).
COPY loaders/python-loader.py loaders/install-python-loader.sh /tmp/
RUN sh /tmp/install-python-loader.sh /tmp/python-loader.py \
    && rm /tmp/python-loader.py /tmp/install-python-loader.sh

COPY cs-run /usr/local/bin/cs-run
RUN chmod 0755 /usr/local/bin/cs-run \
    && install -D -m 0644 /usr/local/bin/cs-run \
        "/usr/local/share/code-sandbox/cs-run-$(sha256sum < /usr/local/bin/cs-run | cut -c1-16)" \
    && groupadd --gid 1000 sandbox \
    && useradd --uid 1000 --gid 1000 --home-dir /sandbox --no-create-home \
        --shell /bin/sh --comment "Code Sandbox" sandbox \
    && install -d -m 0755 -o 1000 -g 1000 /sandbox /sandbox/outputs /opt/cs-libs \
    && ln -sfn /sandbox/.cs-workspace /workspace \
    && printf 'language=python\nbuilt=%s\ndebian=%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
        "$(cat /etc/debian_version)" > /etc/code-sandbox-image

LABEL org.opencontainers.image.title=code-sandbox-python
# Each run gets a fresh tmpfs on /tmp, so matplotlib's cache dir must live there.
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/sandbox \
    LANG=C.UTF-8 \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    MPLBACKEND=Agg \
    MPLCONFIGDIR=/tmp/matplotlib
USER 1000:1000
WORKDIR /sandbox
