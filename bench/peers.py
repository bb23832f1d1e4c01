#!/usr/bin/python3
"""The per-call flows of the projects users move from, through the Engine API as they do it.

code-sandbox-mcp (philschmid/code-sandbox-mcp, src/code_sandbox_mcp/utils.py) answers each
run_python_code with `with SandboxSession(lang="python", keep_template=True, ...) as s: s.run(code)`
from llm-sandbox (vndee/llm-sandbox, llm_sandbox/docker.py and core/session_base.py); llm-sandbox's
own sessions open and close the same way. Both use the Docker SDK for Python, so this helper does
the same calls with the same SDK (python3-docker), one flow per request, driven by bench.mjs over
stdin/stdout (one JSON object per line each way), so that its rows stay interleaved with ours.

Requests: {"op": "hello"} | {"op": "flow"} | {"op": "lean"} | {"op": "open"} | {"op": "run"} |
{"op": "close"} | {"op": "ceiling", "total": N, "concurrency": C, "container": ID} | {"op": "quit"}.
"flow", "lean" and "ceiling" may name the program and what it must print: "code" (default
`print(1)`), "expect" (its stdout, default "1\n") and "plot" (true: it shows a matplotlib figure,
which must come back as a PNG; see PLOT_SETUP). Every answer: {"ok": bool, "parts": {step: ms},
"detail": str, ...}. See README.md for what each flow includes and where it departs from the
originals (and why).
"""

import collections
import io
import json
import socket
import sys
import tarfile
import tempfile
import threading
import time
import traceback
import uuid
from pathlib import Path

import docker

IMAGE = "code-sandbox/python:latest"
CODE = "print(1)"
EXPECTED = "1\n"
WORKDIR = "/sandbox"                        # llm-sandbox SessionConfig.workdir default
VENV = f"{WORKDIR}/.sandbox-venv"           # session_base.PYTHON_VENV_DIR_NAME
PIP_CACHE = f"{WORKDIR}/.sandbox-pip-cache"  # session_base.PYTHON_PIP_CACHE_DIR_NAME
RUN_TIMEOUT_S = 30                          # code-sandbox-mcp EXECUTION_TIMEOUT

# Figures: code-sandbox-mcp's run (the plain session) returns none. llm-sandbox's
# ArtifactSandboxSession (the one its own MCP server's execute_code uses) puts a set-up in front of
# the program: the Agg backend, plt.show and plt.savefig wrapped to save each figure as a numbered
# PNG in /tmp/sandbox_plots (a counter kept in a file there), and the same for plotly and seaborn
# when they import; after the run it reads that directory back from the container. The whole flow
# does the same: this set-up (in this file's words, the same steps) and one get_archive of the
# directory. The lower bound only wraps plt.show (the program imports pyplot itself).
PLOT_DIR = "/tmp/sandbox_plots"
PLOT_SETUP = f"""import os
os.makedirs({PLOT_DIR!r}, exist_ok=True)
os.makedirs("/tmp/sandbox_output", exist_ok=True)
_counter_path = {PLOT_DIR!r} + "/.counter"
try:
    with open(_counter_path) as _f:
        _plots = int(_f.read().strip() or 0)
except (OSError, ValueError):
    _plots = 0
def _next_plot(ext):
    global _plots
    _plots += 1
    with open(_counter_path, "w") as _f:
        _f.write(str(_plots))
    return f"{PLOT_DIR}/{{_plots:06d}}{{ext}}"
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    _show, _savefig = plt.show, plt.savefig
    def _capture_show(*args, **kwargs):
        try:
            fig = plt.gcf()
            if fig and fig.get_axes():
                fig.savefig(_next_plot(".png"), format="png", dpi=100, bbox_inches="tight")
        finally:
            plt.clf()
    def _capture_savefig(name, *args, **kwargs):
        out = _savefig(name, *args, **kwargs)
        import shutil
        shutil.copy2(name, _next_plot(os.path.splitext(str(name))[1]))
        return out
    plt.show, plt.savefig = _capture_show, _capture_savefig
except ImportError:
    pass
try:
    import plotly.graph_objects
except ImportError:
    pass
try:
    import seaborn
except ImportError:
    pass

"""
LEAN_PLOT_SETUP = f"""import os
import matplotlib.pyplot as _plt
os.makedirs({PLOT_DIR!r}, exist_ok=True)
def _capture_show(*args, **kwargs):
    _plt.gcf().savefig({PLOT_DIR!r} + "/000001.png", format="png")
    _plt.clf()
_plt.show = _capture_show

"""

LABEL = "code-sandbox-bench"
run_id = "unset"
network = "none"


def ms_since(t0):
    return (time.perf_counter() - t0) * 1000.0


def machine_cpu_ms():
    """CPU time the whole machine has spent (every core, kernel included), in ms, as bench.mjs
    reads it: /proc/stat's first line without idle and iowait, in USER_HZ (100/s)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    return (sum(v) - v[3] - v[4]) * 10


class Steps:
    """Times each step of a flow (perf_counter, ms), for the parts breakdown in the report."""

    def __init__(self):
        self.parts = {}
        self._t = time.perf_counter()

    def done(self, name):
        now = time.perf_counter()
        self.parts[name] = self.parts.get(name, 0.0) + (now - self._t) * 1000.0
        self._t = now


def exec_cmd(container, cmd, workdir=None):
    """DockerContainerAPI.execute_command: exec_run, not streamed, demultiplexed."""
    kwargs = {"cmd": cmd, "stream": False, "tty": False, "stderr": True, "stdout": True, "demux": True}
    if workdir:
        kwargs["workdir"] = workdir
    result = container.exec_run(**kwargs)
    out, err = result.output if isinstance(result.output, tuple) else (None, None)
    return result.exit_code or 0, (out or b"").decode(), (err or b"").decode()


class LlmSandboxSession:
    """SandboxDockerSession with lang=python, as code-sandbox-mcp constructs it."""

    def __init__(self):
        self.client = None
        self.container = None
        self.setup = {}   # exit codes of the environment set-up commands, for the report

    def open(self, steps):
        # SandboxDockerSession.__init__: docker.from_env() (the SDK asks /version: API "auto").
        self.client = docker.from_env()
        steps.done("client")
        # open() -> _prepare_image() -> _get_or_pull_image(): images.get, local image found.
        image = self.client.images.get(IMAGE)
        steps.done("image")
        # open(): create with detach, tty, user root, PYTHONUNBUFFERED; no command of its own,
        # so PID 1 is the image's CMD: `python3` on their python:3.11 images. Ours has no CMD,
        # so the same `python3` is given here. Network: see README (theirs defaults to bridge).
        self.container = self.client.containers.create(
            image=image, command=["python3"], detach=True, tty=True, user="root",
            environment={"PYTHONUNBUFFERED": "1"}, network_mode=network,
            labels={LABEL: run_id})
        steps.done("create")
        self.container.start()
        steps.done("start")
        # environment_setup(): workdir, venv, pip cache dir, pip upgrade. Their images call the
        # interpreter `python`; ours only has `python3` (the same interpreter).
        self.setup["mkdir"] = exec_cmd(self.container, f"mkdir -p {WORKDIR}")[0]
        # Their venv gets its own pip (ensurepip). Ours has no ensurepip (Debian's python3
        # without python3-venv): their command fails there and leaves a venv without pip, so the
        # venv is made --without-pip and the same upgrade runs as the venv's `python -m pip`
        # (the image's pip 23 through the system site packages). The ensurepip part of their
        # venv step is therefore missing from this row.
        self.setup["venv"] = exec_cmd(
            self.container, f"python3 -m venv --system-site-packages --without-pip {VENV}")[0]
        steps.done("venv")
        self.setup["mkdir cache"] = exec_cmd(self.container, f"mkdir -p {PIP_CACHE}")[0]
        self.setup["pip"] = exec_cmd(
            self.container, f"{VENV}/bin/python -m pip install --upgrade pip --cache-dir {PIP_CACHE}")[0]
        steps.done("pip")

    def run(self, steps, code=CODE):
        # BaseSession.run(): the body runs in a worker thread bounded by the timeout.
        box = {}

        def body():
            try:
                with tempfile.NamedTemporaryFile(delete=False, suffix=".py", mode="w", encoding="utf-8") as f:
                    f.write(code)
                    src = f.name
                try:
                    dest = f"{WORKDIR}/{uuid.uuid4().hex}.py"
                    # copy_to_runtime(): mkdir -p of the parent, then put_archive of a tar.
                    exec_cmd(self.container, f"mkdir -p {WORKDIR}")
                    tar_stream = io.BytesIO()
                    with tarfile.open(fileobj=tar_stream, mode="w") as tar:
                        tar.add(src, arcname=Path(dest).name)
                    self.container.put_archive(WORKDIR, tar_stream.getvalue())
                    steps.done("put_archive")
                    # PythonHandler.get_execution_commands() with the venv's interpreter.
                    box["result"] = exec_cmd(self.container, f"{VENV}/bin/python {dest}", workdir=WORKDIR)
                    steps.done("exec")
                finally:
                    Path(src).unlink(missing_ok=True)
            except Exception as e:  # reported as a wrong answer
                box["error"] = e

        worker = threading.Thread(target=body, daemon=True)
        worker.start()
        worker.join(RUN_TIMEOUT_S)
        if worker.is_alive():
            raise TimeoutError(f"run did not finish within {RUN_TIMEOUT_S} s")
        if "error" in box:
            raise box["error"]
        return box["result"]

    def close(self, steps):
        # close(): stop (10 s grace: PID 1 python3 ignores SIGTERM), wait, remove(force=True).
        if self.container is not None:
            self.container.stop()
            steps.done("stop")
            self.container.wait()
            self.container.remove(force=True)
            steps.done("remove")
            self.container = None
        if self.client is not None:
            self.client.close()
            self.client = None


def answer_ok(result, expected=EXPECTED, plots=None):
    """The exit status and stdout, and with `plots` (the PNGs read back) at least one figure."""
    code, out, err = result
    ok = code == 0 and out == expected and (plots is None or len(plots) > 0)
    return ok, "" if ok else json.dumps(
        {"exit": code, "stdout": out[-200:], "stderr": err[-300:],
         **({} if plots is None else {"plots": len(plots)})})


def program(req, setup):
    """The request's program ("code", default print(1)), with `setup` in front when it plots."""
    code = req.get("code", CODE)
    return (setup + code) if req.get("plot") else code


def read_plots(container):
    """The figures the program saved: one get_archive of PLOT_DIR, the PNGs in it (checked by
    their signature), as llm-sandbox reads its plot directory back."""
    stream, _stat = container.get_archive(PLOT_DIR)
    data = b"".join(stream)
    plots = []
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for member in tar.getmembers():
            if member.isfile() and member.name.endswith(".png"):
                content = tar.extractfile(member).read()
                if content.startswith(b"\x89PNG\r\n\x1a\n"):
                    plots.append(len(content))
    return plots


def op_flow(req):
    """One code-sandbox-mcp run_python_code call: a whole llm-sandbox session around one run (for
    a program that plots, the run of llm-sandbox's ArtifactSandboxSession: see PLOT_SETUP)."""
    steps = Steps()
    session = LlmSandboxSession()
    plots = None
    try:
        session.open(steps)
        result = session.run(steps, program(req, PLOT_SETUP))
        if req.get("plot"):
            plots = read_plots(session.container)
            steps.done("plots")
    finally:
        session.close(steps)
    ok, detail = answer_ok(result, req.get("expect", EXPECTED), plots)
    return {"ok": ok, "parts": steps.parts, "setup": session.setup, "detail": detail}


live = {"session": None}


def op_open(_req):
    if live["session"] is not None:
        raise RuntimeError("a session is already open")
    steps = Steps()
    live["session"] = LlmSandboxSession()
    live["session"].open(steps)
    return {"ok": True, "parts": steps.parts, "setup": live["session"].setup, "detail": ""}


def op_run(_req):
    """A call in an open llm-sandbox session: mkdir -p, put_archive, exec of the venv python."""
    if live["session"] is None:
        raise RuntimeError("no open session")
    steps = Steps()
    ok, detail = answer_ok(live["session"].run(steps))
    return {"ok": ok, "parts": steps.parts, "detail": detail}


def op_close(_req):
    steps = Steps()
    if live["session"] is not None:
        live["session"].close(steps)
        live["session"] = None
    return {"ok": True, "parts": steps.parts, "detail": ""}


lean_client = {"c": None}


def op_lean(req):
    """The same per-call flow without the venv, the pip upgrade and the stop grace period, on a
    client kept open: create, start, mkdir, put_archive, exec, remove(force). Not what either
    project does; the least that a container per call through the SDK costs. A program that plots
    gets the least set-up that saves its figure (LEAN_PLOT_SETUP), read back with get_archive."""
    if lean_client["c"] is None:
        lean_client["c"] = docker.from_env()
    client = lean_client["c"]
    steps = Steps()
    plots = None
    container = client.containers.create(
        image=IMAGE, command=["python3"], detach=True, tty=True, user="root",
        environment={"PYTHONUNBUFFERED": "1"}, network_mode=network, labels={LABEL: run_id})
    try:
        steps.done("create")
        container.start()
        steps.done("start")
        exec_cmd(container, f"mkdir -p {WORKDIR}")
        tar_stream = io.BytesIO()
        data = program(req, LEAN_PLOT_SETUP).encode()
        with tarfile.open(fileobj=tar_stream, mode="w") as tar:
            info = tarfile.TarInfo("code.py")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        container.put_archive(WORKDIR, tar_stream.getvalue())
        steps.done("put_archive")
        result = exec_cmd(container, f"python3 {WORKDIR}/code.py", workdir=WORKDIR)
        steps.done("exec")
        if req.get("plot"):
            plots = read_plots(container)
            steps.done("plots")
    finally:
        container.remove(force=True)
        steps.done("remove")
    ok, detail = answer_ok(result, req.get("expect", EXPECTED), plots)
    return {"ok": ok, "parts": steps.parts, "detail": detail}


# Settings copied from one of our server's sandboxes (docker inspect), so that the ceiling's
# containers are made exactly as ours: limits, read-only root, tmpfs, work volume, no network.
HOST_KEYS = ["Memory", "MemorySwap", "NanoCpus", "PidsLimit", "ReadonlyRootfs", "Tmpfs", "Mounts",
             "CapDrop", "SecurityOpt", "Init", "IpcMode", "Ulimits", "NetworkMode"]


def hand_over(client, cid):
    """Our sandbox's own protocol, as a client without a pool would speak it: attach to the
    created container, start it, send the program framed as cs-run expects ("<nonce> <size>\\n"
    and the source) and read until the result line; True when it says exit status 0."""
    sock = client.attach_socket(cid, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
    raw = sock._sock
    try:
        client.start(cid)
        nonce = uuid.uuid4().hex[:16].encode()
        program = CODE.encode()
        raw.sendall(nonce + b" " + str(len(program)).encode() + b"\n" + program)
        seen = b""
        # The result line comes on both streams; the nonce is random hex, which the frames' 8-byte
        # headers cannot spell, so the raw stream can be searched.
        while nonce + b" " not in seen:
            chunk = raw.recv(65536)
            if not chunk:
                return False
            seen += chunk
        tail = seen[seen.index(nonce + b" ") + len(nonce) + 1:]
        return tail.split(b"\n", 1)[0].split(b" ", 1)[0] == b"0"
    finally:
        # The end of stdin is what lets our supervisor end the container (as our server's
        # removal does). shutdown, not close: the SDK's file object still holds the socket, and
        # close() alone would leave the connection, and the container, open.
        try:
            raw.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        raw.close()
        sock.close()


def op_ceiling(req):
    """The engine's own rate: create+start+wait+remove of containers with our sandboxes'
    settings, `concurrency` at once, `total` in all. variant "bare" (default): running
    `python3 -c CODE` (the request's "code", default print(1)), nothing read back. variant
    "handover" (print(1) only): our sandboxes' command and environment, with the program sent
    over the attached stdin and the result line read back (what our server does for each call,
    without a pool)."""
    total, concurrency = int(req["total"]), int(req["concurrency"])
    handover = req.get("variant", "bare") == "handover"
    probe = docker.from_env()
    try:
        attrs = probe.api.inspect_container(req["container"])
    finally:
        probe.close()
    hc_src = attrs["HostConfig"]
    host_config = {k: hc_src[k] for k in HOST_KEYS if hc_src.get(k) not in (None, "", [], {})}
    cfg = attrs["Config"]
    code = req.get("code", CODE)
    body = {
        "Image": cfg["Image"], "Cmd": ["python3", "-c", code], "Entrypoint": [],
        "User": cfg.get("User") or "", "WorkingDir": cfg.get("WorkingDir") or "",
        "NetworkDisabled": bool(cfg.get("NetworkDisabled")), "Labels": {LABEL: run_id},
        "HostConfig": host_config,
    }
    if handover:
        if code != CODE:
            raise ValueError("the hand-over ceiling sends print(1) only")
        body.update({"Cmd": cfg["Cmd"], "Env": cfg.get("Env") or [], "AttachStdin": True,
                     "AttachStdout": True, "AttachStderr": True, "OpenStdin": True,
                     "StdinOnce": True, "Tty": False})
    lock = threading.Lock()
    state = {"next": 0, "ok": 0, "failed": 0, "details": []}

    # One client per thread, made before the clock starts.
    clients = [docker.from_env().api for _ in range(concurrency)]
    # Every request the workers send to the engine, by method and path (the clients' own
    # /version at their making is before this): the bench sets them beside ours.
    requests = collections.Counter()

    def count(response, *args, **kwargs):
        with lock:
            requests[f"{response.request.method} {response.request.path_url}"] += 1

    for c in clients:
        c.hooks["response"].append(count)

    def worker(client):
        try:
            while True:
                with lock:
                    if state["next"] >= total:
                        return
                    state["next"] += 1
                cid = None
                try:
                    cid = client.post(client._url("/containers/create"), json=body)
                    cid = client._result(cid, True)["Id"]
                    if handover:
                        status = 0 if hand_over(client, cid) else "not 0 in the result line"
                        client.wait(cid, timeout=60)
                    else:
                        client.start(cid)
                        # Exit status only: reading the output back would add a request to the
                        # engine's own cost.
                        status = client.wait(cid, timeout=60)["StatusCode"]
                    with lock:
                        if status == 0:
                            state["ok"] += 1
                        else:
                            state["failed"] += 1
                            state["details"].append(f"exit status {status}")
                except Exception as e:  # counted as a failed call
                    with lock:
                        state["failed"] += 1
                        state["details"].append(str(e)[:200])
                finally:
                    if cid:
                        try:
                            client.remove_container(cid, v=True, force=True)
                        except Exception as e:
                            with lock:
                                state["details"].append(f"remove: {str(e)[:200]}")
        finally:
            client.close()

    cpu0 = machine_cpu_ms()
    t0 = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(c,)) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = ms_since(t0)
    return {"ok": state["ok"] == total, "total": total, "okCalls": state["ok"], "failed": state["failed"],
            "wallMs": wall, "cpuMs": machine_cpu_ms() - cpu0, "hostConfig": sorted(host_config),
            "requests": dict(requests), "detail": "; ".join(state["details"][:3])}


def op_hello(req):
    global run_id, network
    run_id = req.get("runId", run_id)
    network = req.get("network", network)
    return {"ok": True, "sdk": docker.__version__, "python": sys.version.split()[0], "detail": ""}


OPS = {"hello": op_hello, "flow": op_flow, "lean": op_lean, "open": op_open, "run": op_run,
       "close": op_close, "ceiling": op_ceiling}


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        if req.get("op") == "quit":
            break
        try:
            res = OPS[req["op"]](req)
        except Exception as e:
            res = {"ok": False, "detail": f"{type(e).__name__}: {e}"[:400],
                   "trace": traceback.format_exc()[-800:]}
        res["id"] = req.get("id")
        sys.stdout.write(json.dumps(res) + "\n")
        sys.stdout.flush()
    op_close({})
    if lean_client["c"] is not None:
        lean_client["c"].close()


if __name__ == "__main__":
    main()
