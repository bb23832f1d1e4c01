#!/usr/bin/python3
"""The official Kubernetes Python client (Debian's python3-kubernetes) against testapiserver.py.

It keeps the test API server honest: a client written for real clusters must be able to run the
sequence the sandbox backend runs, and see what a cluster would answer. The pods run the sandbox
supervisor (containers/cs-run) in the real code-sandbox/python image on the local Docker
engine: the program goes in over attach stdin framed as "<nonce> <size>\\n<program>", its
output and the supervisor's result line come back on stdout, and the exit code is read from the
pod's terminated container state.

Also checked: an exec of tar to fetch an output file, an exec's non-zero exit code on the error
channel, activeDeadlineSeconds, delete with grace 0 (the pod and its container gone), 401 for a
wrong token, client-certificate login, 403 with the apiserver's message for a verb the Role
lacks (also the 1.35 'create' check on a WebSocket exec), the v5.channel.k8s.io close signal
(with websocket-client, the library the official client uses, since python3-kubernetes 22
speaks only v4), and that SIGTERM removes the server's containers.

And the allow-list network mode's objects: a ClusterIP Service (create, read, list by label,
delete, a watch's DELETED) whose cluster IP is in the server's cluster network; a gateway pod
that the Service selects gets that address, and a sandbox pod that the allow-list policy
restricts to the gateway reaches it there and nothing else (not even the gateway's address on
the bridge); a replacement gateway gets the address back, a second one at the same time does
not; SIGTERM removes the cluster network too.

And the persistent workspaces' PersistentVolumeClaims: create (201, Bound, a Docker volume of
the server's), get, list by label, 409, 422 for bad specs, 404; a pod that runs as 1000 with
fsGroup 1000 writes into a new claim mounted inside its emptyDir (the volume's root given the
fsGroup first), a second pod reads it through a readOnly mount and cannot write (EROFS); a pod
whose claim does not exist stays Pending, Unschedulable; a delete while a pod uses the claim marks
it (deletionTimestamp) and it goes with that pod, its volume once no container has it; SIGTERM
leaves no volume.

Run: tests/kubernetes/test_with_official_client.py (needs Docker and code-sandbox/python).
"""

import io
import ipaddress
import json
import os
import secrets
import signal
import ssl
import subprocess
import sys
import tarfile
import tempfile
import time
import traceback

import docker
import websocket
import yaml
from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException
from kubernetes.stream import stream

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SERVER = os.path.join(HERE, "testapiserver.py")
IMAGE = "code-sandbox/python:latest"
NS = "code-sandbox"
RUNNER = "system:serviceaccount:code-sandbox:runner"
# The Role of packaging/kubernetes as the issue describes it, with get beside create on attach
# and exec (a WebSocket upgrade is a GET; 1.35 checks create as well), and the workspaces'
# claims. Not granted: pods/log, deletecollection.
ROLE = ["create,get,list,watch,delete:pods", "get,create:pods/attach", "get,create:pods/exec",
        "list,get:networkpolicies", "get:namespaces",
        "create,get,list,delete:persistentvolumeclaims"]
DENY_EGRESS = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
               "metadata": {"name": "code-sandbox-deny-egress", "namespace": NS},
               "spec": {"podSelector": {"matchLabels": {"code-sandbox": "1"}},
                        "policyTypes": ["Egress"]}}
# The allow-list mode's policies (packaging/kubernetes/40-networkpolicy.yaml): sandboxes with
# code-sandbox.network=allowlist reach the gateway pods only, the gateways anything.
GATEWAY = {"code-sandbox.role": "gateway"}
ALLOWLIST = {"code-sandbox": "1", "code-sandbox.network": "allowlist"}
ALLOWLIST_POLICIES = [
    {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
     "metadata": {"name": "code-sandbox-deny-egress", "namespace": NS},
     "spec": {"podSelector": {"matchLabels": {"code-sandbox": "1"}, "matchExpressions": [
         {"key": "code-sandbox.network", "operator": "DoesNotExist"}]},
         "policyTypes": ["Egress"], "egress": []}},
    {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
     "metadata": {"name": "code-sandbox-deny-ingress", "namespace": NS},
     "spec": {"podSelector": {"matchLabels": {"code-sandbox": "1"}},
              "policyTypes": ["Ingress"], "ingress": []}},
    {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
     "metadata": {"name": "code-sandbox-allowlist-egress", "namespace": NS},
     "spec": {"podSelector": {"matchLabels": ALLOWLIST}, "policyTypes": ["Egress"],
              "egress": [{"to": [{"podSelector": {"matchLabels": GATEWAY}}],
                          "ports": [{"protocol": "TCP", "port": 3128}]}]}},
    {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
     "metadata": {"name": "code-sandbox-gateway", "namespace": NS},
     "spec": {"podSelector": {"matchLabels": GATEWAY}, "policyTypes": ["Ingress", "Egress"],
              "ingress": [{"from": [{"podSelector": {"matchLabels": ALLOWLIST}}],
                           "ports": [{"protocol": "TCP", "port": 3128}]}],
              "egress": [{}]}},
]
# What the backend needs for the allow-list mode besides ROLE (and the logs, to show what a
# sandbox saw).
SERVICES_ROLE = ROLE + ["create,get,list,watch,delete:services", "get:pods/log"]
# A stand-in for the gateway's proxy: answers every connection with one line.
ECHO_SERVER = """
import socketserver
class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        self.wfile.write(b"pong\\n")
socketserver.ThreadingTCPServer.allow_reuse_address = True
socketserver.ThreadingTCPServer(("0.0.0.0", 3128), Handler).serve_forever()
"""
# In an allow-list sandbox: the gateway at the Service's address answers; its address on the
# bridge (outside the cluster network) and the outside world do not. Exit 0 when all holds.
PROBE = """
import socket, sys, time
cluster_ip, bridge_ip = sys.argv[1], sys.argv[2]
def reach(host, port, tries=1):
    for _ in range(tries):
        try:
            with socket.create_connection((host, port), timeout=2) as s:
                return s.recv(64).decode().strip() or "connected"
        except OSError as e:
            error = e
            time.sleep(0.2)
    return "unreachable: %s" % error
answers = [reach(cluster_ip, 3128, 25), reach(bridge_ip, 3128), reach("1.1.1.1", 80)]
print(answers)
sys.exit(0 if answers[0] == "pong" and all(a.startswith("unreachable") for a in answers[1:])
         else 1)
"""

failures = []
checks = 0


def check(condition, what, detail=""):
    global checks
    checks += 1
    print(("ok   " if condition else "FAIL ") + what + (f"  ({detail})" if detail else ""),
          flush=True)
    if not condition:
        failures.append(what)


# ---------------------------------------------------------------------------------------------


class Server:
    def __init__(self, allow, extra=(), policies=(DENY_EGRESS,)):
        self.state = tempfile.mkdtemp(prefix="kube-apiserver-test-")
        self.token = secrets.token_hex(16)
        objects = policies
        policies = os.path.join(self.state, "policies.yaml")
        with open(policies, "w") as f:
            yaml.safe_dump_all(objects, f)
        cmd = [sys.executable, SERVER, "--port", "0", "--token", self.token, "--state-dir",
               self.state, "--make-client-cert", "alice:sandbox-admins",
               "--network-policies", policies, *extra]
        for a in allow:
            cmd += ["--allow", a]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("url: "):
            raise RuntimeError(f"the server did not start: {line!r}")
        self.url = line.split()[1]
        self.proc.stdout.readline()
        self.kubeconfig = os.path.join(self.state, "kubeconfig")

    def api(self, context="testapiserver"):
        cfg = client.Configuration()
        config.load_kube_config(config_file=self.kubeconfig, context=context,
                                client_configuration=cfg)
        return client.ApiClient(cfg)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            return self.proc.wait(30)
        return self.proc.returncode


def supervisor_pod(name_prefix, extra_spec=None, labels=None):
    with open(os.path.join(ROOT, "containers", "cs-run")) as f:
        script = f.read()
    pod = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"generateName": name_prefix, "labels": labels or {"code-sandbox": "1"}},
        "spec": {
            "restartPolicy": "Never", "automountServiceAccountToken": False,
            "activeDeadlineSeconds": 120,
            "securityContext": {"runAsNonRoot": True, "runAsUser": 1000, "runAsGroup": 1000,
                                "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [{
                "name": "sandbox", "image": IMAGE, "imagePullPolicy": "IfNotPresent",
                "command": ["/bin/sh", "-c", script, "cs-run", "main.py",
                            "python3", "-u", "main.py"],
                "workingDir": "/sandbox",
                "env": [{"name": "HOME", "value": "/sandbox"},
                        {"name": "OUTPUT_DIR", "value": "/sandbox/outputs"},
                        {"name": "PYTHONUNBUFFERED", "value": "1"}],
                "stdin": True, "stdinOnce": True, "tty": False,
                "resources": {"limits": {"cpu": "1", "memory": "256Mi",
                                         "ephemeral-storage": "64Mi"}},
                "securityContext": {"readOnlyRootFilesystem": True,
                                    "allowPrivilegeEscalation": False,
                                    "capabilities": {"drop": ["ALL"]}},
                "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"},
                                 {"name": "work", "mountPath": "/sandbox"}],
            }],
            "volumes": [{"name": "tmp", "emptyDir": {"medium": "Memory", "sizeLimit": "64Mi"}},
                        {"name": "work", "emptyDir": {"medium": "Memory", "sizeLimit": "64Mi"}}],
        },
    }
    pod["spec"].update(extra_spec or {})
    return pod


def plain_pod(name_prefix, labels, command, extra_spec=None):
    """A pod of one python3 container, as unprivileged as the sandboxes."""
    pod = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"generateName": name_prefix, "labels": labels},
        "spec": {
            "restartPolicy": "Never", "automountServiceAccountToken": False,
            "enableServiceLinks": False, "activeDeadlineSeconds": 120,
            "securityContext": {"runAsNonRoot": True, "runAsUser": 1000, "runAsGroup": 1000},
            "containers": [{"name": "main", "image": IMAGE, "imagePullPolicy": "IfNotPresent",
                            "command": command,
                            "securityContext": {"allowPrivilegeEscalation": False,
                                                "capabilities": {"drop": ["ALL"]}}}],
        },
    }
    pod["spec"].update(extra_spec or {})
    return pod


def wait_for(core, name, predicate, since, timeout=60):
    """Watches the pod from resourceVersion `since` until predicate(pod); returns (pod, events)."""
    events = []
    w = watch.Watch()
    for ev in w.stream(core.list_namespaced_pod, NS, field_selector=f"metadata.name={name}",
                       resource_version=since, timeout_seconds=timeout):
        pod = ev["object"]
        events.append((ev["type"], pod))
        if predicate(ev["type"], pod):
            w.stop()
            return pod, events
    raise AssertionError(f"pod {name}: not reached in {timeout} s; saw "
                         f"{[(t, p.status.phase) for t, p in events]}")


def run_program(core, name, program, close=True):
    """Attaches (v4, what this client speaks), sends the framed program; returns the stream and
    what came back up to and including the result line."""
    nonce = secrets.token_hex(8)
    ws = stream(core.connect_get_namespaced_pod_attach, name, NS, stdin=True, stdout=True,
                stderr=True, tty=False, _preload_content=False)
    ws.write_stdin(f"{nonce} {len(program.encode())}\n{program}")
    out, err = "", ""
    deadline = time.time() + 60
    while time.time() < deadline and ws.is_open():
        ws.update(timeout=1)
        out += ws.read_stdout() if ws.peek_stdout() else ""
        err += ws.read_stderr() if ws.peek_stderr() else ""
        if any(line.startswith(nonce + " ") for line in out.splitlines()):
            break
    result = [line for line in out.splitlines() if line.startswith(nonce + " ")]
    if close:
        ws.run_forever(timeout=30)  # the supervisor exits: the server ends the stream
    return ws, out, err, (result[0].split()[1:] if result else None)


def docker_containers(uid):
    return docker.from_env().containers.list(all=True,
                                             filters={"label": f"io.kubernetes.pod.uid={uid}"})


def wait_gone(uid, timeout=90):
    end = time.time() + timeout
    while time.time() < end:
        if not docker_containers(uid):
            return True
        time.sleep(0.2)
    return False


def terminated(pod):
    s = pod.status.container_statuses
    return s and s[0].state.terminated


# ---------------------------------------------------------------------------------------------


def scenario_main(server):
    api = server.api()
    core = client.CoreV1Api(api)

    version = client.VersionApi(api).get_code()
    check(version.git_version.startswith("v1."), "GET /version", version.git_version)
    resources = {r.name for r in core.get_api_resources().resources}
    check({"pods", "pods/attach", "pods/exec"} <= resources, "GET /api/v1 lists pods and "
          "pods/attach, pods/exec", sorted(resources))
    pols = client.NetworkingV1Api(api).list_namespaced_network_policy(NS)
    check([p.metadata.name for p in pols.items] == ["code-sandbox-deny-egress"]
          and pols.items[0].spec.policy_types == ["Egress"],
          "the deny-egress NetworkPolicy is listed")

    # 1. A program over attach stdin; output on stdout; Succeeded with exit code 0.
    pod = core.create_namespaced_pod(NS, supervisor_pod("cs-python-"))
    name, uid = pod.metadata.name, pod.metadata.uid
    check(name.startswith("cs-python-") and len(name) == len("cs-python-") + 5,
          "create honours generateName", name)
    check(pod.status.phase == "Pending" and pod.metadata.resource_version,
          "create answers the Pending object with a resourceVersion")
    running, events = wait_for(core, name, lambda t, p: p.status.phase == "Running",
                               pod.metadata.resource_version)
    waiting = [p for _, p in events if p.status.container_statuses
               and p.status.container_statuses[0].state.waiting]
    check(bool(waiting) and waiting[0].status.container_statuses[0].state.waiting.reason ==
          "ContainerCreating", "watch: Pending with ContainerCreating before Running")
    cs = running.status.container_statuses[0]
    check(cs.ready and cs.state.running and cs.state.running.started_at is not None
          and cs.container_id.startswith("docker://"), "watch: Running, ready, started")
    check(len(docker_containers(uid)) == 1, "the pod runs as one Docker container")
    info = docker_containers(uid)[0].attrs
    hc = info["HostConfig"]
    check(hc["ReadonlyRootfs"] and hc["CapDrop"] == ["ALL"]
          and "no-new-privileges" in (hc["SecurityOpt"] or [])
          and hc["Memory"] == 256 * 2**20 and hc["NanoCpus"] == 10**9
          and hc["NetworkMode"] == "none" and info["Config"]["User"] == "1000:1000"
          and any(m["Target"] == "/sandbox" and "size=67108864" in m["VolumeOptions"]["DriverConfig"]["Options"]["o"] for m in hc["Mounts"]),
          "the container carries the pod's limits and security context (deny-egress: no "
          "network)", json.dumps({k: hc.get(k) for k in ("NetworkMode", "Mounts")}))

    program = "import os, sys\nprint('hello from', os.getuid())\nprint('to stderr', file=sys.stderr)\n"
    ws, out, err, result = run_program(core, name, program)
    check("hello from 1000" in out, "attach: the program's stdout comes back", out.strip())
    check("to stderr" in err, "attach: its stderr on channel 2", err.strip())
    check(result is not None and result[0] == "0", "the supervisor's result line says 0", result)
    status = yaml.safe_load(ws.read_channel(3) or "{}")
    check(status.get("status") == "Success", "attach ends with a Success Status on channel 3",
          status)
    done, _ = wait_for(core, name, lambda t, p: p.status.phase in ("Succeeded", "Failed"), "0")
    term = terminated(done)
    check(done.status.phase == "Succeeded" and term and term.exit_code == 0
          and term.reason == "Completed", "the pod Succeeded with exitCode 0",
          f"{done.status.phase} {term and term.exit_code}")

    # 2. A non-zero exit.
    pod2 = core.create_namespaced_pod(NS, supervisor_pod("cs-python-"))
    wait_for(core, pod2.metadata.name, lambda t, p: p.status.phase == "Running",
             pod2.metadata.resource_version)
    _, out, _, result = run_program(core, pod2.metadata.name,
                                    "import sys\nprint('bye')\nsys.exit(3)\n")
    check("bye" in out and result is not None and result[0] == "3",
          "non-zero exit: output and result line 3", result)
    done, _ = wait_for(core, pod2.metadata.name, lambda t, p: p.status.phase in
                       ("Succeeded", "Failed"), "0")
    check(done.status.phase == "Failed" and terminated(done).exit_code == 3
          and terminated(done).reason == "Error", "the pod Failed with exitCode 3",
          f"{done.status.phase} {terminated(done).exit_code}")

    # 3. An output file fetched with tar over exec while the supervisor waits for stdin's end.
    pod3 = core.create_namespaced_pod(NS, supervisor_pod("cs-python-"))
    n3 = pod3.metadata.name
    wait_for(core, n3, lambda t, p: p.status.phase == "Running", pod3.metadata.resource_version)
    ws3, out, _, result = run_program(
        core, n3, "import os\nopen(os.environ['OUTPUT_DIR'] + '/answer.txt', 'w')"
        ".write('forty-two\\n')\nprint('written')\n", close=False)
    check(result is not None and result[0] == "0" and "out" in result,
          "the result line flags an output file", result)
    ex = stream(core.connect_get_namespaced_pod_exec, n3, NS,
                command=["tar", "cf", "-", "-C", "/sandbox/outputs", "."], stdin=False,
                stdout=True, stderr=True, tty=False, _preload_content=False)
    ex.run_forever(timeout=30)
    data = ex.read_stdout() if ex.peek_stdout() else ""
    check(ex.returncode == 0, "exec tar: exit code 0 from the error channel", ex.returncode)
    files = {}
    try:
        with tarfile.open(fileobj=io.BytesIO(data.encode()), mode="r:") as tar:
            for m in tar.getmembers():
                if m.isfile():
                    files[os.path.normpath(m.name)] = tar.extractfile(m).read()
    except tarfile.TarError as e:
        files = {"error": str(e).encode()}
    check(files.get("answer.txt") == b"forty-two\n", "exec tar: the output file comes back",
          files)
    ex2 = stream(core.connect_get_namespaced_pod_exec, n3, NS, command=["sh", "-c", "exit 7"],
                 stdin=False, stdout=True, stderr=True, tty=False, _preload_content=False)
    ex2.run_forever(timeout=30)
    check(ex2.returncode == 7, "exec: a non-zero exit code (NonZeroExitCode cause)",
          ex2.returncode)
    check(ws3.is_open(), "the attach stays open while the files are fetched")
    ws3.close()  # stdin ends (stdinOnce): the supervisor exits
    done, _ = wait_for(core, n3, lambda t, p: p.status.phase in ("Succeeded", "Failed"), "0")
    check(done.status.phase == "Succeeded", "closing the attach ends stdin; the pod Succeeded",
          done.status.phase)

    # 4. activeDeadlineSeconds.
    pod4 = core.create_namespaced_pod(NS, supervisor_pod("cs-deadline-",
                                                         {"activeDeadlineSeconds": 2}))
    done, _ = wait_for(core, pod4.metadata.name, lambda t, p: p.status.phase == "Failed",
                       pod4.metadata.resource_version)
    check(done.status.reason == "DeadlineExceeded" and terminated(done) is not None,
          "activeDeadlineSeconds: Failed with reason DeadlineExceeded",
          f"{done.status.reason} {terminated(done) and terminated(done).exit_code}")

    # 5. Delete with grace 0: the object answered, DELETED on a watch, 404, no container left.
    rv = core.read_namespaced_pod(name, NS).metadata.resource_version
    deleted = core.delete_namespaced_pod(name, NS, grace_period_seconds=0)
    check(deleted.metadata.name == name and deleted.metadata.deletion_timestamp is not None,
          "delete (grace 0) answers the pod")
    _, events = wait_for(core, name, lambda t, p: t == "DELETED", rv, timeout=60)
    check(events[-1][0] == "DELETED", "watch: DELETED")
    try:
        core.read_namespaced_pod(name, NS)
        check(False, "get after delete: 404")
    except ApiException as e:
        body = json.loads(e.body)
        check(e.status == 404 and body["reason"] == "NotFound"
              and body["message"] == f'pods "{name}" not found', "get after delete: 404 NotFound")
    check(wait_gone(uid), "no Docker container left after the delete")
    for p in (pod2, pod3, pod4):
        core.delete_namespaced_pod(p.metadata.name, NS, grace_period_seconds=0)
    check(all(wait_gone(p.metadata.uid) for p in (pod2, pod3, pod4)),
          "every deleted pod's container is gone")

    # 5b. A graceful delete: marked (deletionTimestamp) at once, gone once the container stopped.
    g = core.create_namespaced_pod(NS, supervisor_pod("cs-grace-"))
    running, _ = wait_for(core, g.metadata.name, lambda t, p: p.status.phase == "Running",
                          g.metadata.resource_version)
    answer = core.delete_namespaced_pod(g.metadata.name, NS, grace_period_seconds=1)
    check(answer.metadata.deletion_grace_period_seconds == 1
          and core.read_namespaced_pod(g.metadata.name, NS).metadata.deletion_timestamp,
          "delete (grace 1): the pod stays, marked with its deletionTimestamp")
    _, events = wait_for(core, g.metadata.name, lambda t, p: t == "DELETED",
                         running.metadata.resource_version, timeout=60)
    check(events[-1][0] == "DELETED" and wait_gone(g.metadata.uid),
          "then DELETED on the watch and its container gone",
          [t for t, _ in events])

    # 6. Label selectors in list.
    a = core.create_namespaced_pod(NS, supervisor_pod("cs-sel-", labels={"code-sandbox": "1",
                                                                         "lang": "python"}))
    b = core.create_namespaced_pod(NS, supervisor_pod("cs-sel-", labels={"code-sandbox": "1",
                                                                         "lang": "node"}))
    names = lambda sel: sorted(p.metadata.name for p in  # noqa: E731
                               core.list_namespaced_pod(NS, label_selector=sel).items)
    check(names("lang=python") == [a.metadata.name]
          and names("lang in (python,node)") == sorted([a.metadata.name, b.metadata.name])
          and names("lang!=python,code-sandbox") == [b.metadata.name],
          "list with labelSelector (=, in, !=, exists)")

    # 7. 403 for a verb the Role lacks, with the apiserver's message; logs too.
    try:
        core.delete_collection_namespaced_pod(NS, label_selector="code-sandbox=1")
        check(False, "deletecollection is forbidden")
    except ApiException as e:
        body = json.loads(e.body)
        want = (f'pods is forbidden: User "{RUNNER}" cannot deletecollection resource "pods" '
                f'in API group "" in the namespace "{NS}"')
        check(e.status == 403 and body["reason"] == "Forbidden" and body["message"] == want,
              "403 Forbidden with the apiserver's message", body.get("message"))
    try:
        core.read_namespaced_pod_log(a.metadata.name, NS)
        check(False, "pods/log is forbidden")
    except ApiException as e:
        body = json.loads(e.body)
        check(e.status == 403 and body["message"].startswith(
            f'pods "{a.metadata.name}" is forbidden: User "{RUNNER}" cannot get resource '
            f'"pods/log"'), "403 names the subresource and the pod", body.get("message"))

    # 8. 401 with a wrong token; the client certificate's user authenticates.
    cfg = client.Configuration()
    config.load_kube_config(config_file=server.kubeconfig, client_configuration=cfg)
    cfg.api_key = {"authorization": "Bearer wrong-" + server.token}
    try:
        client.CoreV1Api(client.ApiClient(cfg)).list_namespaced_pod(NS)
        check(False, "a wrong token: 401")
    except ApiException as e:
        check(e.status == 401 and json.loads(e.body)["reason"] == "Unauthorized",
              "a wrong token: 401 Unauthorized")
    cert_core = client.CoreV1Api(server.api("testapiserver-cert"))
    check(len(cert_core.list_namespaced_pod(NS, label_selector="code-sandbox=1").items) == 2,
          "a client certificate (mutual TLS) authenticates")

    # 9. v5.channel.k8s.io with websocket-client: stdin closed by [255, 0], output goes on.
    wait_for(core, b.metadata.name, lambda t, p: p.status.phase == "Running", "0")
    url = (server.url.replace("https://", "wss://") +
           f"/api/v1/namespaces/{NS}/pods/{b.metadata.name}/exec?command=sh&command=-c&"
           f"command=cat%3Becho%20done%20%3E%262&stdin=true&stdout=true&stderr=true")
    ca = os.path.join(server.state, "ca.crt")
    sock = websocket.create_connection(
        url, header=[f"Authorization: Bearer {server.token}"],
        subprotocols=["v4.channel.k8s.io", "v5.channel.k8s.io"],
        sslopt={"cert_reqs": ssl.CERT_REQUIRED, "ca_certs": ca})
    check(sock.getsubprotocol() == "v5.channel.k8s.io", "v5 is chosen when offered",
          sock.getsubprotocol())
    sock.send_binary(b"\x00abc")
    sock.send_binary(b"\xff\x00")
    frames = []
    while True:
        try:
            opcode, data = sock.recv_data(control_frame=False)
        except websocket.WebSocketConnectionClosedException:
            break
        if opcode == websocket.ABNF.OPCODE_CLOSE:
            break
        frames.append(data)
    sock.close()
    check(frames and frames[0] == b"\x01", "first an empty frame on the stdout channel")
    out = b"".join(f[1:] for f in frames if f[:1] == b"\x01")
    err = b"".join(f[1:] for f in frames if f[:1] == b"\x02")
    status = [json.loads(f[1:]) for f in frames if f[:1] == b"\x03"]
    check(out == b"abc" and err == b"done\n" and status == [{"metadata": {}, "status": "Success"}],
          "v5: close of stdin ends cat; stdout, stderr and the Success status follow",
          f"{out!r} {err!r} {status}")
    return [a, b]


def scenario_no_exec_create(server):
    """A Role with get but not create on pods/exec: the 1.35 WebSocket check refuses the exec."""
    core = client.CoreV1Api(server.api())
    pod = core.create_namespaced_pod(NS, supervisor_pod("cs-python-"))
    wait_for(core, pod.metadata.name, lambda t, p: p.status.phase == "Running",
             pod.metadata.resource_version)
    try:
        stream(core.connect_get_namespaced_pod_exec, pod.metadata.name, NS, command=["true"],
               stdin=False, stdout=True, stderr=True, tty=False, _preload_content=False)
        check(False, "exec without create on pods/exec is refused")
    except ApiException as e:
        check("403" in str(e.reason), "exec without create on pods/exec: 403 at the handshake",
              e.reason)
    # The same request as plain HTTP shows the Status body.
    import urllib.request
    req = urllib.request.Request(server.url + f"/api/v1/namespaces/{NS}/pods/"
                                 f"{pod.metadata.name}/exec?command=true&stdout=true",
                                 headers={"Authorization": f"Bearer {server.token}",
                                          "Connection": "Upgrade", "Upgrade": "websocket",
                                          "Sec-WebSocket-Version": "13",
                                          "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
                                          "Sec-WebSocket-Protocol": "v5.channel.k8s.io"})
    ctx = ssl.create_default_context(cafile=os.path.join(server.state, "ca.crt"))
    try:
        urllib.request.urlopen(req, context=ctx)
    except urllib.error.HTTPError as e:
        body = json.loads(e.read())
        want = (f'pods "{pod.metadata.name}" is forbidden: User "{RUNNER}" cannot create '
                f'resource "pods/exec" in API group "" in the namespace "{NS}"')
        check(e.code == 403 and body["message"] == want, "its Status names create on pods/exec",
              body["message"])
    return pod


def cluster_network(server):
    """The server's cluster network, found by the label of its process id."""
    found = docker.from_env().networks.list(
        filters={"label": f"code-sandbox-test.kube-apiserver.pid={server.proc.pid}"})
    return found[0] if len(found) == 1 else None


def cluster_address(uid, network):
    info = docker_containers(uid)[0].attrs
    return ((info["NetworkSettings"]["Networks"].get(network.name) or {}).get("IPAddress"),
            info)


def scenario_services(server):
    """The allow-list mode: a gateway pod behind a ClusterIP Service, a sandbox confined to it."""
    core = client.CoreV1Api(server.api())
    resources = {r.name for r in core.get_api_resources().resources}
    check("services" in resources, "GET /api/v1 lists services")
    name = "code-sandbox-gateway-test"
    selector = {**GATEWAY, "code-sandbox.gateway-of": "test"}
    body = {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "labels": {"code-sandbox.role": "gateway-service"}},
            "spec": {"type": "ClusterIP", "selector": selector,
                     "ports": [{"name": "proxy", "protocol": "TCP", "port": 3128,
                                "targetPort": 3128}]}}
    svc = core.create_namespaced_service(NS, body)
    ip = svc.spec.cluster_ip
    check(ip and svc.spec.cluster_i_ps == [ip] and svc.spec.type == "ClusterIP"
          and svc.spec.session_affinity == "None" and svc.metadata.uid
          and svc.metadata.resource_version and svc.spec.ports[0].target_port == 3128,
          "create_namespaced_service: a ClusterIP Service with a cluster IP", ip)
    net = cluster_network(server)
    subnet = net and ipaddress.ip_network(net.attrs["IPAM"]["Config"][0]["Subnet"])
    check(net is not None and net.attrs["Internal"]
          and net.attrs["Options"].get("com.docker.network.bridge.inhibit_ipv4") == "true"
          and ipaddress.ip_address(ip) in subnet,
          "the cluster IP is in the server's cluster network (internal, no host address)",
          f"{net and net.name} {subnet}")
    check(core.read_namespaced_service(name, NS).spec.cluster_ip == ip,
          "read_namespaced_service")
    names = lambda sel: [s.metadata.name for s in  # noqa: E731
                         core.list_namespaced_service(NS, label_selector=sel).items]
    check(names("code-sandbox.role=gateway-service") == [name]
          and names("code-sandbox.role=other") == []
          and [s.metadata.name for s in core.list_service_for_all_namespaces().items] == [name],
          "list_namespaced_service with a labelSelector, and in all namespaces")
    try:
        core.create_namespaced_service(NS, body)
        check(False, "a second create of the Service: 409")
    except ApiException as e:
        check(e.status == 409 and json.loads(e.body)["reason"] == "AlreadyExists",
              "a second create of the Service: 409 AlreadyExists")
    try:
        core.create_namespaced_service(NS, {**body, "metadata": {"name": "other"},
                                            "spec": {**body["spec"], "type": "NodePort"}})
        check(False, "a NodePort Service is refused")
    except ApiException as e:
        check(e.status == 422 and "test API server" in json.loads(e.body)["message"],
              "a NodePort Service: 422, a limit of this server", json.loads(e.body)["message"])

    # The gateway (a stand-in answering on 3128) gets the Service's address; a sandbox that the
    # policies confine to the gateways reaches it there, and nothing else.
    gateway = core.create_namespaced_pod(NS, plain_pod("cs-gateway-", selector,
                                                       ["python3", "-c", ECHO_SERVER]))
    running, _ = wait_for(core, gateway.metadata.name, lambda t, p: p.status.phase == "Running",
                          gateway.metadata.resource_version)
    address, info = cluster_address(gateway.metadata.uid, net)
    check(address == ip and info["HostConfig"]["NetworkMode"] == "bridge"
          and running.status.pod_ip == info["NetworkSettings"]["Networks"]["bridge"]["IPAddress"],
          "the gateway pod: on its own network (bridge) and at the cluster IP on the cluster "
          "network", f"{address} {running.status.pod_ip}")
    sandbox = core.create_namespaced_pod(NS, plain_pod(
        "cs-allowlist-", ALLOWLIST, ["python3", "-c", PROBE, ip, running.status.pod_ip],
        {"dnsPolicy": "None", "dnsConfig": {"nameservers": ["192.0.2.1"]}}))
    done, _ = wait_for(core, sandbox.metadata.name,
                       lambda t, p: p.status.phase in ("Succeeded", "Failed"),
                       sandbox.metadata.resource_version)
    log = core.read_namespaced_pod_log(sandbox.metadata.name, NS).strip()
    check(done.status.phase == "Succeeded", "an allow-list sandbox reaches the gateway at the "
          "cluster IP, not its bridge address nor the outside", log)
    hc = docker_containers(sandbox.metadata.uid)[0].attrs["HostConfig"]
    check(hc["NetworkMode"] == net.name and hc["Dns"] == ["192.0.2.1"]
          and ipaddress.ip_address(done.status.pod_ip) in subnet,
          "its container: on the cluster network alone, dnsConfig's nameserver",
          f"{hc['NetworkMode']} {hc['Dns']} {done.status.pod_ip}")

    # One endpoint per Service: a second gateway at the same time joins without the address; a
    # replacement made right after the delete gets it once the old container has gone.
    second = core.create_namespaced_pod(NS, plain_pod("cs-gateway-", selector,
                                                      ["python3", "-c", ECHO_SERVER]))
    wait_for(core, second.metadata.name, lambda t, p: p.status.phase == "Running",
             second.metadata.resource_version)
    address2, _ = cluster_address(second.metadata.uid, net)
    check(address2 and address2 != ip, "a second pod of the Service: on the cluster network, "
          "without the Service's address", address2)
    core.delete_namespaced_pod(second.metadata.name, NS, grace_period_seconds=0)
    core.delete_namespaced_pod(gateway.metadata.name, NS, grace_period_seconds=0)
    third = core.create_namespaced_pod(NS, plain_pod("cs-gateway-", selector,
                                                     ["python3", "-c", ECHO_SERVER]))
    wait_for(core, third.metadata.name, lambda t, p: p.status.phase == "Running",
             third.metadata.resource_version)
    check(cluster_address(third.metadata.uid, net)[0] == ip,
          "a replacement gateway made right after the delete gets the cluster IP")

    rv = svc.metadata.resource_version
    core.delete_namespaced_service(name, NS)
    try:
        core.read_namespaced_service(name, NS)
        check(False, "get after delete_namespaced_service: 404")
    except ApiException as e:
        check(e.status == 404, "delete_namespaced_service, then get: 404")
    events = [ev["type"] for ev in watch.Watch().stream(
        core.list_namespaced_service, NS, resource_version=rv, timeout_seconds=2)]
    check(events == ["DELETED"], "watch of services: DELETED", events)
    return [third, sandbox], net


def server_volumes(server):
    return docker.from_env().volumes.list(
        filters={"label": f"code-sandbox-test.kube-apiserver.pid={server.proc.pid}"})


def claim_body(name, labels=None, spec=None):
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "labels": labels or {"code-sandbox": "1"},
                         "annotations": {"code-sandbox.workspace": "data"}},
            "spec": spec if spec is not None else {"accessModes": ["ReadWriteOnce"],
                                                   "resources": {"requests": {"storage": "2Gi"}}}}


def claim_pod(prefix, claim, command, read_only_mount=False, read_only_claim=False):
    """A pod as the workspaces' will be: uid 1000, fsGroup 1000, an emptyDir at /sandbox and the
    claim inside it."""
    pod = plain_pod(prefix, {"code-sandbox": "1"}, command)
    pod["spec"]["securityContext"].update(fsGroup=1000)
    pod["spec"]["volumes"] = [
        {"name": "work", "emptyDir": {"medium": "Memory", "sizeLimit": "64Mi"}},
        {"name": "data", "persistentVolumeClaim": {"claimName": claim,
                                                   "readOnly": read_only_claim}}]
    pod["spec"]["containers"][0]["volumeMounts"] = [
        {"name": "data", "mountPath": "/sandbox/.cs-workspace/data", "readOnly": read_only_mount},
        {"name": "work", "mountPath": "/sandbox"}]  # (nested first: the engine orders them)
    return pod


WRITER = """
import os, stat
root = "/sandbox/.cs-workspace/data"
st = os.stat(root)
print("root", st.st_gid, oct(stat.S_IMODE(st.st_mode)), os.getuid(), sorted(os.getgroups()))
os.makedirs(root + "/sub", exist_ok=True)
with open(root + "/sub/hello.txt", "w") as f:
    f.write("persisted\\n")
open("/sandbox/scratch", "w").write("x")
print("wrote", os.stat(root + "/sub").st_gid)
"""
READER = """
import errno, sys
root = "/sandbox/.cs-workspace/data"
print("read", open(root + "/sub/hello.txt").read().strip())
try:
    open(root + "/sub/other.txt", "w")
    print("wrote: not read-only")
except OSError as e:
    print("write", errno.errorcode.get(e.errno))
"""


def container_log(uid):
    """A pod's output from its container (this Role has no pods/log)."""
    found = docker_containers(uid)
    return found[0].logs().decode(errors="replace") if found else ""


def claim_error(call):
    try:
        call()
        return None, {}
    except ApiException as e:
        return e.status, json.loads(e.body)


def scenario_claims(server):
    """The persistent workspaces' claims: one Docker volume per claim, pods that use it."""
    core = client.CoreV1Api(server.api())
    resources = {r.name: r for r in core.get_api_resources().resources}
    check("persistentvolumeclaims" in resources
          and resources["persistentvolumeclaims"].short_names == ["pvc"],
          "GET /api/v1 lists persistentvolumeclaims")
    name = "code-sandbox-workspace-" + secrets.token_hex(16)
    pvc = core.create_namespaced_persistent_volume_claim(
        NS, claim_body(name, {"code-sandbox": "1", "code-sandbox.workspace": "w1"}))
    meta = pvc.metadata
    check(meta.name == name and meta.namespace == NS and meta.uid and meta.resource_version
          and meta.creation_timestamp and meta.annotations.get("code-sandbox.workspace") == "data"
          and "kubernetes.io/pvc-protection" in meta.finalizers
          and pvc.spec.volume_mode == "Filesystem" and pvc.status.phase == "Bound"
          and pvc.status.access_modes == ["ReadWriteOnce"]
          and pvc.status.capacity == {"storage": "2Gi"},
          "create_namespaced_persistent_volume_claim: 201, Bound, Filesystem, 2Gi, the "
          "pvc-protection finalizer", f"{pvc.status} {meta.finalizers}")
    volumes = [v.name for v in server_volumes(server)]
    check(len(volumes) == 1 and name in volumes[0] and meta.uid in volumes[0] and NS in volumes[0],
          "the claim has a Docker volume of the server's, named after it", volumes)
    check(core.read_namespaced_persistent_volume_claim(name, NS).metadata.uid == meta.uid,
          "read_namespaced_persistent_volume_claim")
    other = core.create_namespaced_persistent_volume_claim(
        NS, claim_body(name[:-1] + "x", {"code-sandbox": "1", "code-sandbox.workspace": "w2"},
                       {"accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "1Gi"}}}))
    listed = lambda sel: sorted(c.metadata.name for c in  # noqa: E731
                                core.list_namespaced_persistent_volume_claim(
                                    NS, label_selector=sel).items)
    check(listed("code-sandbox.workspace=w1") == [name]
          and listed("code-sandbox=1") == sorted([name, other.metadata.name])
          and listed("code-sandbox.workspace=none") == [],
          "list_namespaced_persistent_volume_claim with a labelSelector")
    code, body = claim_error(lambda: core.create_namespaced_persistent_volume_claim(
        NS, claim_body(name)))
    check(code == 409 and body.get("reason") == "AlreadyExists"
          and body.get("message") == f'persistentvolumeclaims "{name}" already exists',
          "a second claim of the same name: 409 AlreadyExists", body.get("message"))
    code, body = claim_error(lambda: core.read_namespaced_persistent_volume_claim("nope", NS))
    check(code == 404 and body.get("reason") == "NotFound"
          and body.get("message") == 'persistentvolumeclaims "nope" not found',
          "get of a claim that does not exist: 404 NotFound", body.get("message"))
    bad = {"no accessModes": {"resources": {"requests": {"storage": "1Gi"}}},
           "empty accessModes": {"accessModes": [],
                                 "resources": {"requests": {"storage": "1Gi"}}},
           "unknown access mode": {"accessModes": ["ReadWriteSometimes"],
                                   "resources": {"requests": {"storage": "1Gi"}}},
           "no storage request": {"accessModes": ["ReadWriteOnce"], "resources": {}},
           "storage not a quantity": {"accessModes": ["ReadWriteOnce"],
                                      "resources": {"requests": {"storage": "lots"}}}}
    for what, spec in bad.items():
        code, body = claim_error(lambda: core.create_namespaced_persistent_volume_claim(
            NS, claim_body("code-sandbox-workspace-bad", spec=spec)))
        check(code == 422 and body.get("reason") == "Invalid",
              f"a claim with {what}: 422 Invalid", body.get("message"))
    check(len(server_volumes(server)) == 2, "no volume for the refused claims")

    # A pod that runs as 1000 with fsGroup 1000 writes into the new claim (the volume's root
    # root:root 0755 until the kubelet's ownership change), mounted inside its emptyDir.
    writer = core.create_namespaced_pod(NS, claim_pod("cs-writer-", name,
                                                      ["python3", "-c", WRITER]))
    done, _ = wait_for(core, writer.metadata.name,
                       lambda t, p: p.status.phase in ("Succeeded", "Failed"),
                       writer.metadata.resource_version)
    log = container_log(writer.metadata.uid)
    check(done.status.phase == "Succeeded" and "root 1000 0o2775 1000 [1000]" in log
          and "wrote 1000" in log,
          "a pod (uid 1000, fsGroup 1000) writes into the claim: the root got group 1000, "
          "g+rwxs", log.strip())
    mounts = docker_containers(writer.metadata.uid)[0].attrs["HostConfig"]["Mounts"]
    data = [m for m in mounts if m["Target"] == "/sandbox/.cs-workspace/data"]
    check(len(data) == 1 and data[0]["Source"] == volumes[0] and not data[0].get("ReadOnly")
          and data[0]["VolumeOptions"]["NoCopy"],
          "its container mounts the claim's volume (read-write, not copied from the image)",
          data)
    helpers = docker.from_env().containers.list(all=True, filters={
        "label": "code-sandbox-test.kube-apiserver.helper"})
    check(not helpers, "the ownership helper container is gone")

    reader = core.create_namespaced_pod(NS, claim_pod("cs-reader-", name,
                                                      ["python3", "-c", READER],
                                                      read_only_mount=True))
    done, _ = wait_for(core, reader.metadata.name,
                       lambda t, p: p.status.phase in ("Succeeded", "Failed"),
                       reader.metadata.resource_version)
    log = container_log(reader.metadata.uid)
    check(done.status.phase == "Succeeded" and "read persisted" in log and "write EROFS" in log,
          "a second pod reads the file through a readOnly mount and cannot write (EROFS)",
          log.strip())

    # A pod whose claim does not exist: Pending, unschedulable, as the scheduler leaves it.
    lost = core.create_namespaced_pod(NS, claim_pod("cs-lost-", "no-such-claim",
                                                    ["true"]))
    pending, _ = wait_for(core, lost.metadata.name, lambda t, p: any(
        c.type == "PodScheduled" and c.status == "False"
        for c in p.status.conditions or []), lost.metadata.resource_version, timeout=10)
    cond = [c for c in pending.status.conditions if c.type == "PodScheduled"][0]
    check(pending.status.phase == "Pending" and cond.reason == "Unschedulable"
          and 'persistentvolumeclaim "no-such-claim" not found' in cond.message
          and not pending.spec.node_name,
          "a pod whose claim does not exist: Pending, PodScheduled False Unschedulable",
          cond.message)

    # A delete while a running pod uses the claim: marked, gone with that pod.
    holder = core.create_namespaced_pod(NS, claim_pod("cs-holder-", name,
                                                      ["sleep", "600"], read_only_claim=True))
    wait_for(core, holder.metadata.name, lambda t, p: p.status.phase == "Running",
             holder.metadata.resource_version)
    mounts = docker_containers(holder.metadata.uid)[0].attrs["HostConfig"]["Mounts"]
    check(any(m["Target"] == "/sandbox/.cs-workspace/data" and m.get("ReadOnly")
              for m in mounts), "persistentVolumeClaim.readOnly: a read-only mount")
    answer = core.delete_namespaced_persistent_volume_claim(name, NS)
    again = core.read_namespaced_persistent_volume_claim(name, NS)
    check(answer.metadata.deletion_timestamp is not None
          and again.metadata.deletion_timestamp is not None
          and "kubernetes.io/pvc-protection" in again.metadata.finalizers,
          "delete of a claim a running pod uses: 200, it stays with its deletionTimestamp")
    code, _ = claim_error(lambda: core.delete_namespaced_persistent_volume_claim(name, NS))
    check(code is None, "a second delete answers it too")
    core.delete_namespaced_pod(holder.metadata.name, NS, grace_period_seconds=0)
    end = time.time() + 10
    while time.time() < end:
        code, _ = claim_error(lambda: core.read_namespaced_persistent_volume_claim(name, NS))
        if code == 404:
            break
        time.sleep(0.1)
    check(code == 404, "once that pod is deleted the claim is gone (404)")
    # The finished writer's and reader's containers still have the volume: it goes with them.
    check(any(v.name == volumes[0] for v in server_volumes(server)),
          "its volume stays while finished pods' containers have it")
    for p in (writer, reader):
        core.delete_namespaced_pod(p.metadata.name, NS, grace_period_seconds=0)
    end = time.time() + 15
    while time.time() < end and any(v.name == volumes[0] for v in server_volumes(server)):
        time.sleep(0.2)
    check(not any(v.name == volumes[0] for v in server_volumes(server)),
          "then the volume is removed")

    # A claim no pod uses goes at once, its volume with it.
    answer = core.delete_namespaced_persistent_volume_claim(other.metadata.name, NS)
    code, _ = claim_error(lambda: core.read_namespaced_persistent_volume_claim(
        other.metadata.name, NS))
    end = time.time() + 10
    while time.time() < end and server_volumes(server):
        time.sleep(0.1)
    check(answer.metadata.name == other.metadata.name and code == 404
          and not server_volumes(server),
          "delete of an unused claim: 200 with the object, gone at once with its volume")
    # One more claim and the lost pod stay for the shutdown to remove.
    core.create_namespaced_persistent_volume_claim(NS, claim_body(name))
    return [lost]


def main():
    if not docker.from_env().images.list(name=IMAGE.split(":")[0]):
        print(f"SKIP: {IMAGE} is not built")
        return 77  # (ctest: SKIP_RETURN_CODE)
    servers = []
    try:
        main_server = Server(ROLE)
        servers.append(main_server)
        left = scenario_main(main_server)
        left += scenario_claims(main_server)
        other = Server(["*:pods", "get:pods/exec", "*:pods/attach"])
        servers.append(other)
        pod = scenario_no_exec_create(other)
        # SIGTERM removes every container the server made (pods still running included).
        code = main_server.stop()
        check(code == 0 and all(wait_gone(p.metadata.uid, 5) for p in left),
              "SIGTERM: the server exits 0 and its running pods' containers are gone")
        check(not server_volumes(main_server), "SIGTERM: its claims' volumes are gone")
        try:
            client.CoreV1Api(other.api()).list_namespaced_service(NS)
            check(False, "services without a rule for them: 403")
        except ApiException as e:
            want = (f'services is forbidden: User "{RUNNER}" cannot list resource "services" in '
                    f'API group "" in the namespace "{NS}"')
            check(e.status == 403 and json.loads(e.body)["message"] == want,
                  "services without a rule for them: 403", json.loads(e.body)["message"])
        code, body = claim_error(lambda: client.CoreV1Api(
            other.api()).create_namespaced_persistent_volume_claim(NS, claim_body("x")))
        check(code == 403 and body.get("message") == (
            f'persistentvolumeclaims is forbidden: User "{RUNNER}" cannot create resource '
            f'"persistentvolumeclaims" in API group "" in the namespace "{NS}"'),
            "persistentvolumeclaims without a rule for them: 403", body.get("message"))
        code = other.stop()
        check(code == 0 and wait_gone(pod.metadata.uid, 5), "the second server too")
        third = Server(SERVICES_ROLE, ["--pod-network", "bridge"], ALLOWLIST_POLICIES)
        servers.append(third)
        left, net = scenario_services(third)
        code = third.stop()
        networks = [n.name for n in docker.from_env().networks.list()]
        check(code == 0 and all(wait_gone(p.metadata.uid, 5) for p in left)
              and net is not None and net.name not in networks,
              "SIGTERM: the third server's containers and cluster network are gone")
    except Exception:
        traceback.print_exc()
        failures.append("exception")
    finally:
        for s in servers:
            try:
                s.stop()
            except Exception:
                s.proc.kill()
    print(f"{checks - len(failures)}/{checks} checks passed" +
          (f"; failed: {failures}" if failures else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
