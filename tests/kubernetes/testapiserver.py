#!/usr/bin/python3
"""A Kubernetes API server for tests: the subset a sandbox backend uses, with real containers.

No Kubernetes server can run on the test machines (its binaries are not packaged here), so this
server answers the part of the API that the Kubernetes backend uses, written from the API
reference and the kubelet/apiserver sources, and runs every pod's one container as a real
container on the local Docker engine, so that what a pod prints and its exit code are real:

- discovery: /version, /api, /api/v1, /apis, /apis/networking.k8s.io[/v1], /healthz, /livez,
  /readyz;
- pods: create (generateName, defaults, 201 with the object), get, list and watch (label and
  field selectors; watch events ADDED/MODIFIED/DELETED, one JSON object a line, each with its
  resourceVersion), delete (gracePeriodSeconds, 0 = at once), deletecollection, pods/status,
  pods/log; status as a kubelet reports it: Pending (ContainerCreating) -> Running (running,
  ready) -> Succeeded/Failed (terminated with the exit code); activeDeadlineSeconds -> Failed
  with reason DeadlineExceeded;
- pods/attach and pods/exec over WebSocket, subprotocols v5.channel.k8s.io and
  v4.channel.k8s.io (see WebSocketStreams);
- networkpolicies (networking.k8s.io/v1): list, get, create, delete; loaded from a file too. A
  pod gets the network given by --pod-network when no policy that selects it restricts its
  egress, or when one of their egress rules reaches further than pods (an approximation: such a
  rule counts as allowing all egress); the cluster network only when every rule reaches only
  pods (podSelector peers); no network when the policies have no egress rule at all;
- services (core/v1, type ClusterIP with a selector): create, get, list, watch, delete. The
  cluster network (see ClusterNetwork below) emulates the pod network: an internal Docker network
  that the host has no address on. Pods that egress rules name as destinations join it, and a
  pod that a Service selects joins it with the Service's cluster IP as its own address, so that
  clusterIP:port reaches it (one endpoint per Service);
- persistentvolumeclaims (core/v1): create, get, list and watch (label selectors), delete. A
  claim is Bound at once (volumeMode Filesystem defaulted, spec.volumeName pvc-<uid>, the
  requested storage as its capacity) to its own Docker volume, made with it and removed with it;
  pods mount it (persistentVolumeClaim volumes, readOnly from the volume or the mount), and with
  an fsGroup the volume's root and content get that group first (the kubelet's ownership
  change, as fsGroupChangePolicy OnRootMismatch, in a short-lived helper container). A delete
  keeps a claim that a scheduled, unfinished pod uses (the kubernetes.io/pvc-protection
  finalizer: deletionTimestamp set) until the last such pod ends or goes. A pod whose claim does
  not exist or is being deleted stays Pending, unschedulable, as the scheduler leaves it. One
  node: every access mode (but ReadWriteOncePod, refused) means any pod here; no storage
  classes, PersistentVolumes or expansion; capacity is not enforced;
- namespaces: get, for the namespaces given with --namespace;
- authentication by bearer token or client certificate (mutual TLS), 401 otherwise;
  authorization by a set of allowed verbs per resource (--allow), 403 with the apiserver's
  message otherwise.

What a pod may ask for is what the sandbox backend sends: one container, restartPolicy Never,
emptyDir and persistentVolumeClaim volumes. Anything else is refused with 422 (the message says
it is this server's limit) rather than run differently from a cluster. Every container, volume
and network it makes carries the label code-sandbox-test.kube-apiserver=<this server's id>: a
pod's container is removed on its deletion, a claim's volume with the claim, and all of them at
shutdown (SIGTERM, SIGINT) and, for servers that died, when a server starts.

Usage: testapiserver.py --port 0 --token TOKEN --state-dir DIR [--allow VERB:RESOURCE ...]
prints "url: https://127.0.0.1:PORT" and writes DIR/kubeconfig (server, CA, token) for clients.
"""

import argparse
import asyncio
import base64
import datetime
import ipaddress
import json
import os
import random
import re
import secrets
import signal
import socket
import ssl
import struct
import subprocess
import sys
import urllib.parse

import yaml
from aiohttp import ClientSession, ClientTimeout, UnixConnector, WSMsgType, web

KUBE_VERSION = {
    "major": "1",
    "minor": "35",
    "gitVersion": "v1.35.0-testapiserver",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2025-12-17T00:00:00Z",
    "goVersion": "go1.25.5",
    "compiler": "gc",
    "platform": "linux/amd64",
}
NODE_NAME = "testapiserver-node"
NODE_LABELS = {
    "kubernetes.io/hostname": NODE_NAME,
    "kubernetes.io/os": "linux",
    "kubernetes.io/arch": "amd64",
}
LABEL_INSTANCE = "code-sandbox-test.kube-apiserver"
LABEL_PID = "code-sandbox-test.kube-apiserver.pid"
LABEL_HOST = "code-sandbox-test.kube-apiserver.host"
LABEL_HELPER = "code-sandbox-test.kube-apiserver.helper"
DOCKER_API = "/v1.41"
DEFAULT_USER = "system:serviceaccount:code-sandbox:runner"

# The channels of the remote command WebSocket protocols (k8s.io/apimachinery
# pkg/util/httpstream/wsstream/doc.go and pkg/util/remotecommand/constants.go).
STDIN, STDOUT, STDERR, ERROR, RESIZE, CLOSE = 0, 1, 2, 3, 4, 255
PROTOCOL_V5 = "v5.channel.k8s.io"
PROTOCOL_V4 = "v4.channel.k8s.io"

# Resources this server serves, with their API group and the verbs RBAC knows for them.
RESOURCES = {
    "pods": ("", ["create", "delete", "deletecollection", "get", "list", "watch"]),
    "pods/attach": ("", ["create", "get"]),
    "pods/exec": ("", ["create", "get"]),
    "pods/log": ("", ["get"]),
    "pods/status": ("", ["get"]),
    "namespaces": ("", ["get"]),
    "services": ("", ["create", "delete", "get", "list", "watch"]),
    "persistentvolumeclaims": ("", ["create", "delete", "get", "list", "watch"]),
    "networkpolicies": ("networking.k8s.io", ["create", "delete", "get", "list", "watch"]),
}


def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def docker_time(value):
    """Docker's RFC 3339 with nanoseconds -> Kubernetes' seconds."""
    if not value or value.startswith("0001-"):
        return None
    return value[:19] + "Z"


# ---------------------------------------------------------------------------------------------
# Status objects, as the apiserver writes them (k8s.io/apimachinery pkg/api/errors).


class ApiError(Exception):
    def __init__(self, code, reason, message, details=None):
        super().__init__(message)
        self.code, self.reason, self.message, self.details = code, reason, message, details

    def status(self):
        body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": self.message, "reason": self.reason, "code": self.code}
        if self.details is not None:
            body["details"] = self.details
        return body

    def response(self):
        return web.json_response(self.status(), status=self.code)


def qualified(resource, group):
    return resource + ("." + group if group else "")


def not_found(resource, name, group=""):
    return ApiError(404, "NotFound", f'{qualified(resource, group)} "{name}" not found',
                    {"name": name, "group": group, "kind": resource} if group else
                    {"name": name, "kind": resource})


def bad_request(message):
    return ApiError(400, "BadRequest", message)


def invalid(kind, name, causes):
    """causes: (field, reason, message) -> 422 as field validation reports it."""
    text = "; ".join(f"{field}: {message}" for field, _, message in causes)
    return ApiError(422, "Invalid", f'{kind} "{name}" is invalid: {text}',
                    {"name": name, "kind": kind,
                     "causes": [{"reason": r, "message": m, "field": f} for f, r, m in causes]})


def unsupported(kind, name, field, what):
    return invalid(kind, name, [(field, "FieldValueNotSupported",
                                 f"Unsupported value: {what} (a limit of this test API server)")])


# ---------------------------------------------------------------------------------------------
# Quantities and selectors.

_SUFFIX = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
           "n": 1e-9, "u": 1e-6, "m": 1e-3, "": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
           "P": 1e15, "E": 1e18}


def parse_quantity(value):
    """A resource.Quantity ("512Mi", "500m", "1.5", "1e3") as a number."""
    if isinstance(value, (int, float)):
        return float(value)
    m = re.fullmatch(r"([+-]?[0-9.]+)(?:([eE][+-]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?)",
                     str(value).strip())
    if not m:
        raise ValueError(f"quantities must match the regular expression "
                         f"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': {value!r}")
    number = float(m.group(1))
    if m.group(2):
        return number * 10 ** int(m.group(2)[1:])
    return number * _SUFFIX[m.group(3) or ""]


def parse_label_selector(text):
    """k8s.io/apimachinery labels.Parse, the part clients use: =, ==, !=, in, notin, key, !key."""
    reqs = []
    if not text:
        return reqs
    # Split on commas outside parentheses.
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    for part in (p.strip() for p in parts):
        if not part:
            raise bad_request(f"unable to parse requirement: empty requirement in {text!r}")
        m = re.fullmatch(r"([^\s=!()]+)\s+(in|notin)\s+\(([^)]*)\)", part)
        if m:
            values = {v.strip() for v in m.group(3).split(",") if v.strip()}
            reqs.append((m.group(1), m.group(2), values))
            continue
        m = re.fullmatch(r"([^\s=!]+)\s*(==|=|!=)\s*([^\s=!]*)", part)
        if m:
            op = "!=" if m.group(2) == "!=" else "="
            reqs.append((m.group(1), op, {m.group(3)}))
            continue
        m = re.fullmatch(r"(!?)([^\s=!()]+)", part)
        if m:
            reqs.append((m.group(2), "!" if m.group(1) else "exists", set()))
            continue
        raise bad_request(f"unable to parse requirement: {part!r}")
    return reqs


def labels_match(reqs, labels):
    labels = labels or {}
    for key, op, values in reqs:
        present = key in labels
        value = labels.get(key)
        if op == "=" and not (present and value in values):
            return False
        if op == "!=" and present and value in values:
            return False
        if op == "in" and not (present and value in values):
            return False
        if op == "notin" and present and value in values:
            return False
        if op == "exists" and not present:
            return False
        if op == "!" and present:
            return False
    return True


def selector_from_label_selector(sel):
    """A metav1.LabelSelector (matchLabels, matchExpressions) as requirements."""
    reqs = [(k, "=", {v}) for k, v in (sel.get("matchLabels") or {}).items()]
    for e in sel.get("matchExpressions") or []:
        op = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}[e["operator"]]
        reqs.append((e["key"], op, set(e.get("values") or [])))
    return reqs


FIELDS = {
    "pods": {"metadata.name": lambda o: o["metadata"]["name"],
             "metadata.namespace": lambda o: o["metadata"]["namespace"],
             "spec.nodeName": lambda o: o["spec"].get("nodeName", ""),
             "spec.restartPolicy": lambda o: o["spec"].get("restartPolicy", ""),
             "status.phase": lambda o: o.get("status", {}).get("phase", "")},
    "networkpolicies": {"metadata.name": lambda o: o["metadata"]["name"],
                        "metadata.namespace": lambda o: o["metadata"]["namespace"]},
    "services": {"metadata.name": lambda o: o["metadata"]["name"],
                 "metadata.namespace": lambda o: o["metadata"]["namespace"]},
    "persistentvolumeclaims": {"metadata.name": lambda o: o["metadata"]["name"],
                               "metadata.namespace": lambda o: o["metadata"]["namespace"]},
}


def parse_field_selector(resource, text):
    reqs = []
    for part in (p.strip() for p in (text or "").split(",")):
        if not part:
            continue
        m = re.fullmatch(r"([^=!]+?)\s*(==|=|!=)\s*(.*)", part)
        if not m:
            raise bad_request(f"invalid selector: '{text}'; can't understand '{part}'")
        field = m.group(1)
        if field not in FIELDS[resource]:
            raise bad_request(f'field label not supported: {field}')
        reqs.append((FIELDS[resource][field], m.group(2) == "!=", m.group(3)))
    return reqs


def fields_match(reqs, obj):
    return all((get(obj) != value) if negate else (get(obj) == value) for get, negate, value in reqs)


# ---------------------------------------------------------------------------------------------
# The Docker engine, asynchronously: JSON calls through aiohttp on the unix socket, and
# hijacked streams (attach, exec) on a raw connection.


class Docker:
    def __init__(self, socket_path):
        self.socket_path = socket_path
        self.session = ClientSession(connector=UnixConnector(path=socket_path),
                                     timeout=ClientTimeout(total=None))

    async def close(self):
        await self.session.close()

    async def call(self, method, path, params=None, body=None, ok=(200, 201, 204, 304)):
        async with self.session.request(method, "http://docker" + DOCKER_API + path,
                                        params=params, json=body) as r:
            data = await r.read()
            if r.status not in ok:
                try:
                    message = json.loads(data).get("message", data.decode())
                except ValueError:
                    message = data.decode(errors="replace")
                raise DockerError(r.status, message)
            if r.content_type == "application/json" and data:
                return json.loads(data)
            return data

    async def hijack(self, path, body):
        """POST that upgrades to a raw stream (attach, exec start): returns (reader, writer)."""
        reader, writer = await asyncio.open_unix_connection(self.socket_path)
        data = json.dumps(body).encode() if body is not None else b""
        writer.write((f"POST {DOCKER_API}{path} HTTP/1.1\r\nHost: docker\r\n"
                      f"Connection: Upgrade\r\nUpgrade: tcp\r\n"
                      f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
                      ).encode() + data)
        await writer.drain()
        head = await reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        if status not in (101, 200):
            rest = await reader.read(65536)
            writer.close()
            raise DockerError(status, rest.decode(errors="replace").strip())
        return reader, writer


class DockerError(Exception):
    def __init__(self, status, message):
        super().__init__(f"{status}: {message}")
        self.status, self.message = status, message


def demux(raw):
    """The payloads of Docker's multiplexed log stream (no TTY), in order."""
    out, i = b"", 0
    while i + 8 <= len(raw):
        size = struct.unpack(">I", raw[i + 4:i + 8])[0]
        out += raw[i + 8:i + 8 + size]
        i += 8 + size
    return out


async def read_frames(reader, tty):
    """Docker's multiplexed stream (no TTY): 8-byte headers [stream, 0, 0, 0, size32]."""
    if tty:
        while True:
            data = await reader.read(32768)
            if not data:
                return
            yield STDOUT, data
    while True:
        try:
            head = await reader.readexactly(8)
        except asyncio.IncompleteReadError:
            return
        stream, size = head[0], struct.unpack(">I", head[4:])[0]
        try:
            payload = await reader.readexactly(size)
        except asyncio.IncompleteReadError:
            return
        yield (STDERR if stream == 2 else STDOUT), payload


# ---------------------------------------------------------------------------------------------
# The objects, their resource versions and the watches on them.


class Store:
    def __init__(self):
        self.rv = 0
        self.objects = {}  # (resource, namespace, name) -> object
        self.history = []  # (rv, type, resource, object), for watches from a resourceVersion
        self.watchers = set()
        self.hooks = []  # f(event, resource, obj) after every change: the server's controllers

    def next_rv(self):
        self.rv += 1
        return str(self.rv)

    def get(self, resource, ns, name):
        return self.objects.get((resource, ns, name))

    def items(self, resource, ns=None):
        return [o for (r, n, _), o in sorted(self.objects.items(), key=lambda kv: kv[0])
                if r == resource and (ns is None or n == ns)]

    def put(self, resource, obj, event):
        obj["metadata"]["resourceVersion"] = self.next_rv()
        key = (resource, obj["metadata"]["namespace"], obj["metadata"]["name"])
        self.objects[key] = obj
        self.publish(event, resource, obj)

    def remove(self, resource, obj):
        key = (resource, obj["metadata"]["namespace"], obj["metadata"]["name"])
        self.objects.pop(key, None)
        obj["metadata"]["resourceVersion"] = self.next_rv()
        self.publish("DELETED", resource, obj)

    def publish(self, event, resource, obj):
        snapshot = json.loads(json.dumps(obj))
        self.history.append((int(obj["metadata"]["resourceVersion"]), event, resource, snapshot))
        for w in list(self.watchers):
            w.offer(event, resource, snapshot)
        for hook in self.hooks:
            hook(event, resource, obj)


class Watcher:
    """One watch: the objects it has seen, so an object that leaves its selection is DELETED."""

    def __init__(self, resource, ns, labels, fields):
        self.resource, self.ns, self.labels, self.fields = resource, ns, labels, fields
        self.queue = asyncio.Queue()
        self.inside = set()

    def matches(self, obj):
        return ((self.ns is None or obj["metadata"]["namespace"] == self.ns)
                and labels_match(self.labels, obj["metadata"].get("labels"))
                and fields_match(self.fields, obj))

    def offer(self, event, resource, obj):
        if resource != self.resource:
            return
        key = (obj["metadata"]["namespace"], obj["metadata"]["name"])
        was, now_in = key in self.inside, self.matches(obj)
        if event == "DELETED":
            if was:
                self.inside.discard(key)
                self.queue.put_nowait(("DELETED", obj))
            return
        if now_in:
            self.inside.add(key)
            self.queue.put_nowait(("ADDED" if not was else event, obj))
        elif was:
            self.inside.discard(key)
            self.queue.put_nowait(("DELETED", obj))


# ---------------------------------------------------------------------------------------------
# Authentication and authorization.


class Authorizer:
    """The verbs allowed per resource, the same for every authenticated user (one Role)."""

    def __init__(self, rules, websocket_create_check=True):
        self.rules = set()
        for rule in rules:
            verbs, _, resources = rule.partition(":")
            if not resources:
                raise SystemExit(f"--allow {rule!r}: expected VERB:RESOURCE")
            for v in verbs.split(","):
                for r in resources.split(","):
                    self.rules.add((v.strip(), r.strip()))
        # From Kubernetes 1.35 (AuthorizePodWebsocketUpgradeCreatePermission, on by default) a
        # WebSocket upgrade to pods/exec, attach or portforward is authorized as "get" (its HTTP
        # method) and also as "create".
        self.websocket_create_check = websocket_create_check

    def allowed(self, verb, resource):
        return any(v in (verb, "*") and r in (resource, "*") for v, r in self.rules)

    def check(self, user, verb, resource, ns, name=""):
        if self.allowed(verb, resource):
            return
        group = RESOURCES.get(resource, ("", []))[0]
        base = resource.split("/")[0]
        where = f'in the namespace "{ns}"' if ns else "at the cluster scope"
        reason = (f'User "{user}" cannot {verb} resource "{resource}" in API group "{group}" '
                  f"{where}")
        subject = f'{qualified(base, group)} "{name}"' if name else qualified(base, group)
        details = {"kind": base}
        if name:
            details["name"] = name
        if group:
            details["group"] = group
        raise ApiError(403, "Forbidden", f"{subject} is forbidden: {reason}", details)


# ---------------------------------------------------------------------------------------------
# Pods: defaults, validation, the Docker container made from one, and its lifecycle.

NAME_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
GENERATE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apiserver pkg/storage/names


def default_pod(pod):
    """The defaults the apiserver fills in (pkg/apis/core/v1/defaults.go), those clients see."""
    spec = pod.setdefault("spec", {})
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("serviceAccountName", "default")
    spec.setdefault("serviceAccount", spec["serviceAccountName"])
    spec.setdefault("enableServiceLinks", True)
    spec.setdefault("priority", 0)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    spec.setdefault("tolerations", [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
         "tolerationSeconds": 300},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
         "tolerationSeconds": 300}])
    for c in spec.get("containers") or []:
        c.setdefault("terminationMessagePath", "/dev/termination-log")
        c.setdefault("terminationMessagePolicy", "File")
        image = c.get("image", "")
        tagged = ":" in image.rsplit("/", 1)[-1] or "@" in image
        c.setdefault("imagePullPolicy",
                     "Always" if not tagged or image.endswith(":latest") else "IfNotPresent")
        res = c.setdefault("resources", {})
        if res.get("limits"):
            requests = res.setdefault("requests", {})
            for k, v in res["limits"].items():
                requests.setdefault(k, v)
    for v in spec.get("volumes") or []:
        if "emptyDir" in v and v["emptyDir"] is None:
            v["emptyDir"] = {}


def qos_class(spec):
    limits_all, any_set = True, False
    for c in spec.get("containers") or []:
        res = c.get("resources") or {}
        lim, req = res.get("limits") or {}, res.get("requests") or {}
        if lim or req:
            any_set = True
        for k in ("cpu", "memory"):
            if k not in lim or req.get(k) != lim.get(k):
                limits_all = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if limits_all else "Burstable"


def validate_pod(pod):
    name = pod["metadata"]["name"]
    spec = pod.get("spec") or {}
    causes = []
    containers = spec.get("containers") or []
    if not containers:
        causes.append(("spec.containers", "FieldValueRequired", "Required value"))
    for i, c in enumerate(containers):
        if not c.get("name"):
            causes.append((f"spec.containers[{i}].name", "FieldValueRequired", "Required value"))
        if not c.get("image"):
            causes.append((f"spec.containers[{i}].image", "FieldValueRequired", "Required value"))
    if spec.get("restartPolicy") not in ("Always", "OnFailure", "Never"):
        causes.append(("spec.restartPolicy", "FieldValueNotSupported",
                       f'Unsupported value: "{spec.get("restartPolicy")}": supported values: '
                       f'"Always", "OnFailure", "Never"'))
    causes += dns_problems(spec)
    if spec.get("activeDeadlineSeconds") is not None and spec["activeDeadlineSeconds"] < 1:
        causes.append(("spec.activeDeadlineSeconds", "FieldValueInvalid",
                       f'Invalid value: {spec["activeDeadlineSeconds"]}: must be between 1 and '
                       f"2147483647, inclusive"))
    names = {v.get("name") for v in spec.get("volumes") or []}
    for i, v in enumerate(spec.get("volumes") or []):
        if "persistentVolumeClaim" in v and not (v["persistentVolumeClaim"] or {}).get("claimName"):
            causes.append((f"spec.volumes[{i}].persistentVolumeClaim.claimName",
                           "FieldValueRequired", "Required value"))
    for i, c in enumerate(containers):
        for j, m in enumerate(c.get("volumeMounts") or []):
            if m.get("name") not in names:
                causes.append((f"spec.containers[{i}].volumeMounts[{j}].name", "FieldValueNotFound",
                               f'Not found: "{m.get("name")}"'))
        for k in ("cpu", "memory", "ephemeral-storage"):
            for part in ("limits", "requests"):
                value = ((c.get("resources") or {}).get(part) or {}).get(k)
                if value is None:
                    continue
                try:
                    parse_quantity(value)
                except ValueError as e:
                    causes.append((f"spec.containers[{i}].resources.{part}[{k}]",
                                   "FieldValueInvalid", f"Invalid value: {value!r}: {e}"))
    if causes:
        raise invalid("Pod", name, causes)
    # What this server cannot run the way a cluster would: refused, not run differently.
    if len(containers) > 1:
        raise unsupported("Pod", name, "spec.containers", "more than one container")
    for field in ("initContainers", "ephemeralContainers", "hostNetwork", "hostPID", "hostIPC"):
        if spec.get(field):
            raise unsupported("Pod", name, f"spec.{field}", f"{field}")
    if spec["restartPolicy"] != "Never":
        raise unsupported("Pod", name, "spec.restartPolicy", f'"{spec["restartPolicy"]}"')
    for v in spec.get("volumes") or []:
        kinds = [k for k in v if k != "name"]
        if kinds not in (["emptyDir"], ["persistentVolumeClaim"]):
            raise unsupported("Pod", name, "spec.volumes",
                              f"volume kind {kinds} (only emptyDir and persistentVolumeClaim)")
    c = containers[0]
    for j, m in enumerate(c.get("volumeMounts") or []):
        # (the engine's volume mounts have no sub-path before Docker 26)
        for field in ("subPath", "subPathExpr"):
            if m.get(field):
                raise unsupported("Pod", name, f"spec.containers[0].volumeMounts[{j}].{field}",
                                  field)
    if c.get("tty"):
        # (allowed; attach then has one stream, as with a terminal)
        pass
    for e in c.get("env") or []:
        ref = (e.get("valueFrom") or {}).get("fieldRef")
        if "valueFrom" in e and not (ref and ref.get("fieldPath") in (
                "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName",
                "spec.serviceAccountName")):
            raise unsupported("Pod", name, "spec.containers[0].env", f"valueFrom {e['valueFrom']}")
    for f in ("envFrom", "ports", "livenessProbe", "readinessProbe", "startupProbe", "lifecycle"):
        if c.get(f):
            raise unsupported("Pod", name, f"spec.containers[0].{f}", f)
    # With another policy the kubelet adds these servers to the cluster's DNS; the engine can only
    # replace its own.
    if spec["dnsPolicy"] != "None" and (spec.get("dnsConfig") or {}).get("nameservers"):
        raise unsupported("Pod", name, "spec.dnsConfig.nameservers",
                          f'nameservers with dnsPolicy "{spec["dnsPolicy"]}" (only with "None")')


DNS_POLICIES = ("ClusterFirst", "ClusterFirstWithHostNet", "Default", "None")


def dns_problems(spec):
    """The apiserver's checks of dnsPolicy and dnsConfig (pkg/apis/core/validation)."""
    policy, config = spec.get("dnsPolicy"), spec.get("dnsConfig")
    if policy not in DNS_POLICIES:
        return [("spec.dnsPolicy", "FieldValueNotSupported",
                 f'Unsupported value: "{policy}": supported values: '
                 + ", ".join(f'"{p}"' for p in DNS_POLICIES))]
    if policy == "None" and config is None:
        return [("spec.dnsConfig", "FieldValueRequired",
                 "Required value: must provide `dnsConfig` when `dnsPolicy` is None")]
    servers = (config or {}).get("nameservers") or []
    if policy == "None" and not servers:
        return [("spec.dnsConfig.nameservers", "FieldValueRequired",
                 "Required value: must provide at least one DNS nameserver when `dnsPolicy` is "
                 "None")]
    causes = []
    if len(servers) > 3:
        causes.append(("spec.dnsConfig.nameservers", "FieldValueInvalid",
                       f"Invalid value: {servers}: must not have more than 3 nameservers"))
    for i, server in enumerate(servers):
        try:
            ipaddress.ip_address(server)
        except ValueError:
            causes.append((f"spec.dnsConfig.nameservers[{i}]", "FieldValueInvalid",
                           f'Invalid value: "{server}": must be a valid IP address'))
    return causes


# ---------------------------------------------------------------------------------------------
# Services: defaults and validation.

DNS1035_RE = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")


def default_service(svc):
    """The defaults the apiserver fills in for a ClusterIP Service (pkg/apis/core/v1/defaults.go
    and the registry's IP family defaulting, single-stack IPv4 here)."""
    spec = svc.setdefault("spec", {})
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    if spec["type"] == "ClusterIP":
        spec.setdefault("internalTrafficPolicy", "Cluster")
        spec.setdefault("ipFamilies", ["IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")
    for p in spec.get("ports") or []:
        if isinstance(p, dict):
            p.setdefault("protocol", "TCP")
            if p.get("targetPort") in (None, 0, ""):
                p["targetPort"] = p.get("port")


def validate_service(svc):
    name = svc["metadata"]["name"]
    spec = svc["spec"]
    causes = []
    if spec["type"] not in ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort"):
        causes.append(("spec.type", "FieldValueNotSupported",
                       f'Unsupported value: "{spec["type"]}": supported values: "ClusterIP", '
                       f'"ExternalName", "LoadBalancer", "NodePort"'))
    if spec["sessionAffinity"] not in ("ClientIP", "None"):
        causes.append(("spec.sessionAffinity", "FieldValueNotSupported",
                       f'Unsupported value: "{spec["sessionAffinity"]}": supported values: '
                       f'"ClientIP", "None"'))
    ports = spec.get("ports") or []
    if not ports and spec["type"] != "ExternalName":
        causes.append(("spec.ports", "FieldValueRequired", "Required value"))
    seen = set()
    for i, p in enumerate(ports):
        where = f"spec.ports[{i}]"
        if not isinstance(p, dict):
            causes.append((where, "FieldValueInvalid", f"Invalid value: {p!r}"))
            continue
        if len(ports) > 1 and not p.get("name"):
            causes.append((f"{where}.name", "FieldValueRequired", "Required value"))
        elif p.get("name") in seen:
            causes.append((f"{where}.name", "FieldValueDuplicate",
                           f'Duplicate value: "{p["name"]}"'))
        seen.add(p.get("name"))
        port = p.get("port")
        if not isinstance(port, int) or not 1 <= port <= 65535:
            causes.append((f"{where}.port", "FieldValueInvalid",
                           f"Invalid value: {port!r}: must be between 1 and 65535, inclusive"))
        if p["protocol"] not in ("TCP", "UDP", "SCTP"):
            causes.append((f"{where}.protocol", "FieldValueNotSupported",
                           f'Unsupported value: "{p["protocol"]}": supported values: "SCTP", '
                           f'"TCP", "UDP"'))
    selector = spec.get("selector")
    if selector is not None and (not isinstance(selector, dict) or
                                 not all(isinstance(v, str) for v in selector.values())):
        causes.append(("spec.selector", "FieldValueInvalid",
                       f"Invalid value: {selector!r}: label values must be strings"))
    if causes:
        raise invalid("Service", name, causes)
    # What this server cannot serve the way a cluster would: refused, not served differently.
    if spec["type"] != "ClusterIP":
        raise unsupported("Service", name, "spec.type", f'"{spec["type"]}" (only ClusterIP)')
    if spec.get("clusterIP") == "None":
        raise unsupported("Service", name, "spec.clusterIP", "a headless Service")
    if spec.get("clusterIP") or spec.get("clusterIPs"):
        raise unsupported("Service", name, "spec.clusterIP",
                          f'"{spec.get("clusterIP") or spec.get("clusterIPs")}" (this server '
                          f"allocates the address)")
    if not selector:
        raise unsupported("Service", name, "spec.selector",
                          "a Service without a selector (its endpoints would be managed by hand)")
    if spec["ipFamilies"] != ["IPv4"] or spec["ipFamilyPolicy"] == "RequireDualStack":
        raise unsupported("Service", name, "spec.ipFamilies",
                          f'{spec["ipFamilies"]} {spec["ipFamilyPolicy"]} (IPv4 only)')
    for field in ("externalIPs", "loadBalancerIP", "externalName"):
        if spec.get(field):
            raise unsupported("Service", name, f"spec.{field}", field)
    for i, p in enumerate(ports):
        # The endpoint's container is reached at the Service's address directly: no port
        # translation, and pods cannot name their ports here.
        if p["targetPort"] != p["port"]:
            raise unsupported("Service", name, f"spec.ports[{i}].targetPort",
                              f"{p['targetPort']!r} other than the port {p['port']}")


# ---------------------------------------------------------------------------------------------
# PersistentVolumeClaims: defaults, validation, and what the pods that use them need.

ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
PVC_PROTECTION = "kubernetes.io/pvc-protection"


def default_claim(pvc):
    """The apiserver's default (pkg/apis/core/v1/defaults.go): volumeMode Filesystem."""
    spec = pvc.setdefault("spec", {})
    if isinstance(spec, dict) and spec.get("volumeMode") is None:
        spec["volumeMode"] = "Filesystem"


def validate_claim(pvc):
    """The apiserver's checks of a claim's spec (pkg/apis/core/validation
    ValidatePersistentVolumeClaimSpec), then what this server cannot serve as a cluster would."""
    name = pvc["metadata"]["name"]
    spec = pvc["spec"] if isinstance(pvc["spec"], dict) else {}
    causes = []
    modes = spec.get("accessModes")
    if not modes:
        causes.append(("spec.accessModes", "FieldValueRequired",
                       "Required value: at least 1 access mode is required"))
    elif not isinstance(modes, list):
        causes.append(("spec.accessModes", "FieldValueInvalid", f"Invalid value: {modes!r}"))
    else:
        for mode in modes:
            if mode not in ACCESS_MODES:
                causes.append(("spec.accessModes", "FieldValueNotSupported",
                               f'Unsupported value: "{mode}": supported values: '
                               + ", ".join(f'"{m}"' for m in ACCESS_MODES)))
        if "ReadWriteOncePod" in modes and len(modes) > 1:
            causes.append(("spec.accessModes", "FieldValueForbidden",
                           "Forbidden: may not use ReadWriteOncePod with other access modes"))
    requests = (spec.get("resources") or {}).get("requests") if isinstance(
        spec.get("resources"), dict) else None
    storage = requests.get("storage") if isinstance(requests, dict) else None
    if storage is None:
        causes.append(("spec.resources[storage]", "FieldValueRequired", "Required value"))
    else:
        try:
            if parse_quantity(storage) <= 0:
                causes.append(("spec.resources[storage]", "FieldValueInvalid",
                               f'Invalid value: "{storage}": must be greater than zero'))
        except ValueError as e:
            causes.append(("spec.resources[storage]", "FieldValueInvalid",
                           f"Invalid value: {storage!r}: {e}"))
    if spec.get("volumeMode") not in ("Block", "Filesystem"):
        causes.append(("spec.volumeMode", "FieldValueNotSupported",
                       f'Unsupported value: "{spec.get("volumeMode")}": supported values: '
                       f'"Block", "Filesystem"'))
    if causes:
        raise invalid("PersistentVolumeClaim", name, causes)
    # What this server cannot serve the way a cluster would: refused, not served differently.
    if spec["volumeMode"] != "Filesystem":
        raise unsupported("PersistentVolumeClaim", name, "spec.volumeMode",
                          f'"{spec["volumeMode"]}" (only Filesystem)')
    if "ReadWriteOncePod" in modes:
        raise unsupported("PersistentVolumeClaim", name, "spec.accessModes",
                          '"ReadWriteOncePod" (one pod at a time is not enforced)')
    for field, what in (("storageClassName", "a storage class (this server has none)"),
                        ("volumeName", "a given PersistentVolume"),
                        ("selector", "a selector of PersistentVolumes"),
                        ("dataSource", "a data source"), ("dataSourceRef", "a data source"),
                        ("volumeAttributesClassName", "a VolumeAttributesClass")):
        if spec.get(field) is not None:
            raise unsupported("PersistentVolumeClaim", name, f"spec.{field}", what)


def claim_names(pod):
    """The claims a pod's volumes name: {volume name: persistentVolumeClaim source}."""
    return {v["name"]: v["persistentVolumeClaim"] for v in pod["spec"].get("volumes") or []
            if v.get("persistentVolumeClaim")}


def volume_of(claim):
    """The claim's Docker volume: named after its namespace, name and uid."""
    meta = claim["metadata"]
    return f"k8s_pvc_{meta['name'][:150]}_{meta['namespace']}_{meta['uid']}"


# The kubelet's volume ownership management (pkg/volume/volume_linux.go SetVolumeOwnership) for a
# volume mounted read-write into a pod with an fsGroup, as with fsGroupChangePolicy
# OnRootMismatch: when the root's group is not the fsGroup, everything gets that group, group
# read/write (and execute on directories and on files their owner may execute), directories the
# set-gid bit. Run as root in a helper container with the volume at /volume; $1 = the fsGroup.
OWNERSHIP_SCRIPT = """\
[ "$(stat -c %g /volume)" = "$1" ] && exit 0
chgrp -R "$1" /volume &&
chmod -R g+rw /volume &&
find /volume -type d -exec chmod g+xs {} + &&
find /volume -type f -perm -u=x -exec chmod g+x {} +
"""


class PodRuntime:
    """One pod on the 'node': its container on Docker and the status a kubelet would report."""

    def __init__(self, server, pod):
        self.server, self.pod = server, pod
        self.container_id = None
        self.creating = None  # the container create under way (see run)
        self.task = None
        self.deadline_task = None
        self.deadline_exceeded = False
        self.deleting = False
        self.terminal = asyncio.Event()
        self.address = None  # the cluster IP of the Service this pod is the endpoint of

    def release_address(self):
        """The pod is no endpoint any more (ended or deleted): its Service's address is free for
        the next pod the Service selects (the engine frees it when the container stops)."""
        if self.address and self.server.address_holders.get(self.address) is self:
            del self.server.address_holders[self.address]
        self.address = None

    @property
    def key(self):
        return self.pod["metadata"]["namespace"], self.pod["metadata"]["name"]

    def publish(self):
        if self.deleting and self.server.store.get("pods", *self.key) is not self.pod:
            return
        self.server.store.put("pods", self.pod, "MODIFIED")

    def start(self):
        self.task = asyncio.ensure_future(self.run())

    def container_spec(self):
        return self.pod["spec"]["containers"][0]

    def set_condition(self, ctype, status, reason=None, message=None):
        conds = self.pod["status"].setdefault("conditions", [])
        for c in conds:
            if c["type"] == ctype:
                if c["status"] != status:
                    c["lastTransitionTime"] = now()
                c["status"] = status
                break
        else:
            c = {"type": ctype, "status": status, "lastProbeTime": None,
                 "lastTransitionTime": now()}
            conds.append(c)
        for k, v in (("reason", reason), ("message", message)):
            if v:
                c[k] = v
            else:
                c.pop(k, None)

    def container_status(self, state, ready=False, started=False):
        c = self.container_spec()
        status = {"name": c["name"], "state": state, "lastState": {}, "ready": ready,
                  "restartCount": 0, "image": c["image"], "imageID": "", "started": started}
        if self.container_id:
            status["containerID"] = "docker://" + self.container_id
            status["imageID"] = "docker-pullable://" + self.server.image_ids.get(c["image"], "")
        self.pod["status"]["containerStatuses"] = [status]

    async def run(self):
        pod, spec = self.pod, self.pod["spec"]
        try:
            await asyncio.sleep(0.05)  # as a scheduler would, after the create has answered
            selector = spec.get("nodeSelector") or {}
            if any(NODE_LABELS.get(k) != v for k, v in selector.items()):
                self.set_condition("PodScheduled", "False", "Unschedulable",
                                   "0/1 nodes are available: 1 node(s) didn't match Pod's node "
                                   "affinity/selector. preemption: 0/1 nodes are available: 1 "
                                   "Preemption is not helpful for scheduling.")
                self.publish()
                return
            if spec.get("runtimeClassName") and spec["runtimeClassName"] not in \
                    self.server.runtime_classes:
                # (admission refuses it at create; kept here for a class removed meanwhile)
                return
            # The scheduler's VolumeBinding plugin: a pod whose claim does not exist (or is being
            # deleted) stays Pending, unschedulable, until the claim is there.
            while True:
                problem = self.server.claim_problem(pod)
                if problem is None:
                    break
                message = (f"0/1 nodes are available: {problem}. preemption: 0/1 nodes are "
                           f"available: 1 Preemption is not helpful for scheduling.")
                scheduled = [c for c in pod["status"].get("conditions") or []
                             if c["type"] == "PodScheduled"]
                if not scheduled or scheduled[0].get("message") != message:
                    self.set_condition("PodScheduled", "False", "Unschedulable", message)
                    self.publish()
                await asyncio.sleep(0.2)
            spec["nodeName"] = NODE_NAME
            self.set_condition("PodScheduled", "True")
            self.publish()
            await asyncio.sleep(0.05)
            pod["status"]["hostIP"] = "127.0.0.1"
            pod["status"]["hostIPs"] = [{"ip": "127.0.0.1"}]
            pod["status"]["startTime"] = now()
            self.set_condition("PodReadyToStartContainers", "False")
            self.set_condition("Initialized", "True")
            self.set_condition("Ready", "False", "ContainersNotReady",
                               f"containers with unready status: [{self.container_spec()['name']}]")
            self.set_condition("ContainersReady", "False", "ContainersNotReady",
                               f"containers with unready status: [{self.container_spec()['name']}]")
            self.container_status({"waiting": {"reason": "ContainerCreating"}})
            self.publish()
            if spec.get("activeDeadlineSeconds"):
                self.deadline_task = asyncio.ensure_future(
                    self.deadline(spec["activeDeadlineSeconds"]))
            try:
                body = await self.server.docker_body(pod)
                await self.server.set_volume_ownership(pod, body["Image"])
            except PodConfigError as e:
                self.container_status({"waiting": {"reason": e.reason, "message": e.message}})
                self.publish()
                return
            endpoint = await self.server.join_cluster(self, body)
            if self.deleting:
                self.release_address()
                return
            # Shielded: a delete that cancels this task while dockerd is still creating must
            # still learn the container's id (the engine finishes the create regardless, and
            # a label search made meanwhile would not find it yet).
            self.creating = asyncio.ensure_future(self.server.docker.call(
                "POST", "/containers/create", params={"name": self.docker_name()}, body=body))
            created = await asyncio.shield(self.creating)
            self.container_id = created["Id"]
            if self.deleting:
                return
            if self.deadline_exceeded:
                # (the deadline passed during the create: its kill found nothing running)
                self.finish(137, "Error", None, None, now())
                return
            if endpoint is not None:
                # Its own network first, the cluster network as a second interface (internal:
                # the default route stays on the first).
                await self.server.docker.call(
                    "POST", f"/networks/{self.server.cluster.name}/connect",
                    body={"Container": self.container_id, "EndpointConfig": endpoint})
            try:
                await self.start_container()
            except DockerError as e:
                self.finish(128, "StartError", e.message, None, None)
                return
            info = await self.server.docker.call("GET", f"/containers/{self.container_id}/json")
            started = docker_time(info["State"].get("StartedAt")) or now()
            self.set_condition("PodReadyToStartContainers", "True")
            if not self.deadline_exceeded:
                # The address on its own network (the first one, its NetworkMode).
                networks = (info.get("NetworkSettings") or {}).get("Networks") or {}
                own = networks.get((info.get("HostConfig") or {}).get("NetworkMode")) or {}
                ip = own.get("IPAddress") or (info.get("NetworkSettings") or {}).get("IPAddress")
                if ip:
                    pod["status"]["podIP"] = ip
                    pod["status"]["podIPs"] = [{"ip": ip}]
                pod["status"]["phase"] = "Running"
                self.set_condition("Ready", "True")
                self.set_condition("ContainersReady", "True")
                self.container_status({"running": {"startedAt": started}}, ready=True,
                                      started=True)
                self.publish()
            await self.server.docker.call("POST", f"/containers/{self.container_id}/wait",
                                          params={"condition": "not-running"})
            info = await self.server.docker.call("GET", f"/containers/{self.container_id}/json")
            st = info["State"]
            code = st.get("ExitCode", 0)
            reason = "OOMKilled" if st.get("OOMKilled") else ("Completed" if code == 0 else "Error")
            self.finish(code, reason, st.get("Error") or None, started,
                        docker_time(st.get("FinishedAt")) or now())
        except asyncio.CancelledError:
            raise
        except Exception as e:  # an engine error: the pod fails, as a kubelet would report it
            self.release_address()
            if not self.deleting:
                print(f"testapiserver: pod {self.key}: {e!r}", file=sys.stderr, flush=True)
                self.container_status({"waiting": {"reason": "CreateContainerError",
                                                   "message": str(e)}})
                self.publish()

    async def start_container(self):
        """Starts the container; the engine allocates its fixed address at this point. A
        Service's address may still be held by the container of the pod this one replaces (a
        pod's container is removed right after its delete has answered): retried for a while."""
        loop = asyncio.get_running_loop()
        end = loop.time() + 10
        while True:
            try:
                await self.server.docker.call("POST", f"/containers/{self.container_id}/start")
                return
            except DockerError as e:
                held = self.address and "already in use" in e.message.lower()
                if not held or self.deleting:
                    raise
                if loop.time() > end:
                    raise DockerError(e.status, f"{e.message}: the address {self.address} of its "
                                                f"Service, still held after 10 s")
            await asyncio.sleep(0.2)

    def finish(self, code, reason, message, started, finished):
        if self.terminal.is_set():
            return
        self.release_address()
        pod = self.pod
        term = {"exitCode": code, "reason": reason, "startedAt": started,
                "finishedAt": finished or now()}
        if message:
            term["message"] = message
        if self.container_id:
            term["containerID"] = "docker://" + self.container_id
        self.container_status({"terminated": term})
        if self.deadline_exceeded:
            pod["status"]["phase"] = "Failed"
            pod["status"]["reason"] = "DeadlineExceeded"
            pod["status"]["message"] = "Pod was active on the node longer than the specified deadline"
        else:
            pod["status"]["phase"] = "Succeeded" if code == 0 else "Failed"
        done = "PodCompleted" if pod["status"]["phase"] == "Succeeded" else "PodFailed"
        self.set_condition("PodReadyToStartContainers", "False")
        self.set_condition("Ready", "False", done)
        self.set_condition("ContainersReady", "False", done)
        self.terminal.set()
        if self.deadline_task:
            self.deadline_task.cancel()
        self.publish()

    async def deadline(self, seconds):
        await asyncio.sleep(seconds)
        if self.terminal.is_set() or self.deleting:
            return
        # The kubelet fails the pod and kills its containers (pkg/kubelet/active_deadline.go).
        self.deadline_exceeded = True
        if self.container_id:
            try:
                await self.server.docker.call("POST", f"/containers/{self.container_id}/kill",
                                              ok=(204, 409))
            except DockerError:
                pass
            return  # run() sees the container end and reports it
        if self.task:
            self.task.cancel()
        self.finish(137, "Error", None, None, now())

    def docker_name(self):
        meta = self.pod["metadata"]
        return (f"k8s_{self.container_spec()['name']}_{meta['name']}_{meta['namespace']}_"
                f"{meta['uid'][:8]}_{self.server.instance_id[:6]}")

    async def remove(self, grace):
        """Kubelet side of a delete: stop within the grace period, then remove the container."""
        self.deleting = True
        self.release_address()
        if self.deadline_task:
            self.deadline_task.cancel()
        if self.task and grace == 0:
            self.task.cancel()
        if grace and self.container_id and not self.terminal.is_set():
            try:
                await self.server.docker.call("POST", f"/containers/{self.container_id}/stop",
                                              params={"t": str(grace)}, ok=(204, 304, 404))
            except DockerError:
                pass
        if self.task and not self.task.done():
            self.task.cancel()
            try:
                await self.task
            except (asyncio.CancelledError, Exception):
                pass
        if self.creating is not None and not self.container_id:
            try:
                self.container_id = (await self.creating)["Id"]
            except Exception:
                pass
        if self.container_id:
            await self.server.remove_container(self.container_id)
        else:
            # A create still under way when the task was cancelled leaves a container that only
            # the label knows about.
            await self.server.remove_containers({"io.kubernetes.pod.uid":
                                                 self.pod["metadata"]["uid"]})
        # (the volume of a claim deleted meanwhile goes once no container has it)
        await self.server.remove_released_volumes()


class PodConfigError(Exception):
    def __init__(self, reason, message):
        super().__init__(message)
        self.reason, self.message = reason, message


# ---------------------------------------------------------------------------------------------
# The cluster network: the pod network, as far as NetworkPolicies that restrict pods to pods and
# ClusterIP Services need it.


def to_pods_only(rule):
    """Whether an egress rule reaches only pods of the policy's namespace: every peer a
    podSelector alone (no `to` at all is everywhere; a namespaceSelector or an ipBlock reaches
    past the namespace's pods)."""
    peers = (rule or {}).get("to") or []
    return bool(peers) and all(isinstance(p, dict) and list(p) == ["podSelector"] for p in peers)


class ClusterNetwork:
    """An internal Docker network (no route out) that the host has no address on
    (inhibit_ipv4), made when first needed. The pods that policies restrict to pods are on it
    alone; the pods that such rules name and the endpoints of Services join it as a second
    network. A Service's cluster IP is an address of this network that its endpoint's container
    gets as its own, so clusterIP:port reaches that container with no proxy in between.

    The engine gives a container a fixed address only on a network whose subnet was given at
    its creation: the network is made once to let the engine pick a free subnet, removed, and
    made again with that subnet, dynamic addresses in its lower half and cluster IPs taken from
    the top down, so that the two never meet."""

    def __init__(self, server):
        self.server = server
        self.name = f"testapiserver-{server.instance_id[:6]}-cluster"
        self.subnet = None
        self.lock = asyncio.Lock()

    async def ensure(self):
        async with self.lock:
            if self.subnet is None:
                self.subnet = await self.create()
        return self.subnet

    async def create(self):
        docker = self.server.docker
        body = {"Name": self.name, "CheckDuplicate": True, "Driver": "bridge", "Internal": True,
                "Options": {"com.docker.network.bridge.inhibit_ipv4": "true"},
                "Labels": self.server.docker_labels()}
        for attempt in range(5):
            probe = await docker.call("POST", "/networks/create", body=body)
            try:
                info = await docker.call("GET", f"/networks/{probe['Id']}")
            finally:
                await docker.call("DELETE", f"/networks/{probe['Id']}", ok=(200, 204, 404))
            subnet = ipaddress.ip_network(info["IPAM"]["Config"][0]["Subnet"])
            lower = next(subnet.subnets())
            try:
                await docker.call("POST", "/networks/create", body=dict(body, IPAM={
                    "Driver": "default",
                    "Config": [{"Subnet": str(subnet), "IPRange": str(lower)}]}))
            except DockerError:
                if attempt == 4:
                    raise
                continue  # (another network took the subnet in between)
            print(f"testapiserver: cluster network {self.name} {subnet}", file=sys.stderr,
                  flush=True)
            return subnet

    def allocate(self):
        """A free cluster IP from the top of the subnet down: neither a Service's nor still held
        by a pod of a Service deleted meanwhile."""
        taken = {svc["spec"].get("clusterIP") for svc in self.server.store.items("services")}
        taken |= set(self.server.address_holders)
        for i in range(self.subnet.num_addresses - 6, self.subnet.num_addresses // 2, -1):
            ip = str(self.subnet[i])
            if ip not in taken:
                return ip
        raise ApiError(500, "InternalError", "Internal error occurred: failed to allocate a "
                                             "serviceIP: range is full")


# ---------------------------------------------------------------------------------------------
# Attach and exec over WebSocket.


def choose_protocol(request):
    offered = [p.strip() for h in request.headers.getall("Sec-WebSocket-Protocol", [])
               for p in h.split(",") if p.strip()]
    for p in (PROTOCOL_V5, PROTOCOL_V4):
        if p in offered:
            return p
    return None


def flag(request, name):
    return request.query.get(name, "").lower() in ("1", "true")


class WebSocketStreams:
    """One attach or exec session (kubelet pkg/kubelet/cri/streaming/remotecommand/websocket.go
    and k8s.io/apimachinery pkg/util/httpstream/wsstream/conn.go):

    - every binary message starts with its channel byte: 0 stdin (client to server), 1 stdout,
      2 stderr, 3 error, 4 resize (client to server, JSON {"Width": w, "Height": h});
    - right after the upgrade, an empty message on the lowest output channel asked for (stdout,
      else stderr, else error) tells the client that the streams are set up;
    - at the end, a metav1.Status as JSON on channel 3: {"metadata":{},"status":"Success"}, or
      for an exec that exited non-zero status Failure, reason NonZeroExitCode and
      details.causes[0] = {"reason":"ExitCode","message":"<code>"}; then the WebSocket closes;
    - v5 only: a message [255, channel] from the client closes that channel (stdin: the
      container's stdin reaches its end, the output goes on). With v4 stdin ends when the
      connection does.
    """

    def __init__(self, request, protocol, stdin, stdout, stderr, tty):
        self.request, self.protocol = request, protocol
        self.stdin, self.stdout, self.stderr, self.tty = stdin, stdout, stderr, tty
        self.ws = web.WebSocketResponse(protocols=(protocol,), max_msg_size=0)

    async def open(self):
        await self.ws.prepare(self.request)
        first = STDOUT if self.stdout else (STDERR if self.stderr else ERROR)
        await self.ws.send_bytes(bytes([first]))

    async def send(self, channel, data):
        if channel == STDOUT and not self.stdout or channel == STDERR and not self.stderr:
            return
        await self.ws.send_bytes(bytes([channel]) + data)

    async def pump_input(self, writer, on_resize):
        """Client -> container stdin until the client closes stdin or the connection."""
        stdin_open = self.stdin
        async for msg in self.ws:
            if msg.type not in (WSMsgType.BINARY, WSMsgType.TEXT):
                continue
            data = msg.data if msg.type == WSMsgType.BINARY else msg.data.encode()
            if not data:
                continue
            channel, payload = data[0], data[1:]
            if channel == STDIN and stdin_open and writer is not None:
                writer.write(payload)
                await writer.drain()
            elif channel == CLOSE and self.protocol == PROTOCOL_V5:
                if payload[:1] == bytes([STDIN]) and stdin_open and writer is not None:
                    stdin_open = False
                    if writer.can_write_eof():
                        writer.write_eof()
            elif channel == RESIZE:
                try:
                    size = json.loads(payload)
                    await on_resize(int(size.get("Width", 0)), int(size.get("Height", 0)))
                except (ValueError, AttributeError, DockerError):
                    pass

    async def finish(self, status):
        try:
            await self.ws.send_bytes(bytes([ERROR]) + json.dumps(status).encode())
            await self.ws.close()
        except ConnectionError:
            pass


async def bridge(streams, reader, writer, tty, on_resize):
    """Runs the two directions until the container's output ends; the client may leave first."""
    async def output():
        async for channel, data in read_frames(reader, tty):
            await streams.send(channel, data)

    out_task = asyncio.ensure_future(output())
    in_task = asyncio.ensure_future(streams.pump_input(writer, on_resize))
    try:
        done, _ = await asyncio.wait({out_task, in_task}, return_when=asyncio.FIRST_COMPLETED)
        if in_task in done and not out_task.done():
            # The client closed the connection: detaching closes the container's stdin (stdinOnce)
            # and the output has no reader any more.
            writer.close()
            try:
                await asyncio.wait_for(out_task, 5)
            except (asyncio.TimeoutError, ConnectionError):
                out_task.cancel()
            return False
        return True
    finally:
        in_task.cancel()
        if not out_task.done():
            out_task.cancel()
        writer.close()


# ---------------------------------------------------------------------------------------------
# The server.


class ApiServer:
    def __init__(self, args):
        self.args = args
        self.schema = None
        if getattr(args, "validate_schema", None):
            sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "schema"))
            from validate import Schema  # python3-jsonschema
            self.schema = Schema(args.validate_schema)
        self.instance_id = secrets.token_hex(8)
        self.store = Store()
        self.pods = {}  # (ns, name) -> PodRuntime
        self.tokens = {}
        for t in args.token or []:
            token, _, user = t.partition("=")
            self.tokens[token] = user or DEFAULT_USER
        self.authorizer = Authorizer(args.allow or ["*:*"], not args.no_websocket_create_check)
        self.namespaces = args.namespace or ["default", "code-sandbox"]
        self.runtime_classes = dict(rc.partition("=")[::2] for rc in args.runtime_class or [])
        self.image_ids = {}
        self.docker = None
        self.background = set()
        self.websockets = set()
        self.watch_responses = set()
        self.stopping = asyncio.Event()
        self.supervisor_path = None
        self.cluster = ClusterNetwork(self)
        self.address_holders = {}  # cluster IP -> the PodRuntime whose container has it
        self.released_volumes = set()  # of deleted claims, still held by a finished pod's container
        self.volume_groups = {}  # claim uid -> the fsGroup its volume was given (see below)
        self.ownership_locks = {}  # claim uid -> asyncio.Lock
        self.store.hooks.append(self.claim_protection)

    # -- helpers ------------------------------------------------------------------------------

    def spawn(self, coro):
        task = asyncio.ensure_future(coro)
        self.background.add(task)
        task.add_done_callback(self.background.discard)
        return task

    async def remove_container(self, cid):
        try:
            await self.docker.call("DELETE", f"/containers/{cid}", params={"force": "1", "v": "1"},
                                   ok=(200, 204, 404, 409))
        except DockerError as e:
            print(f"testapiserver: removing {cid[:12]}: {e}", file=sys.stderr, flush=True)

    async def remove_containers(self, labels):
        filters = {"label": [f"{LABEL_INSTANCE}={self.instance_id}"] +
                   [f"{k}={v}" for k, v in labels.items()]}
        found = await self.docker.call("GET", "/containers/json",
                                       params={"all": "1", "filters": json.dumps(filters)})
        await asyncio.gather(*(self.remove_container(c["Id"]) for c in found))

    def docker_labels(self):
        """The labels of every container and network this server makes: what its shutdown and
        the sweep of a later server find them by."""
        return {LABEL_INSTANCE: self.instance_id, LABEL_PID: str(os.getpid()),
                LABEL_HOST: socket.gethostname()}

    async def remove_network(self, nid):
        # (the endpoints of containers just removed can take a moment to go)
        for attempt in range(20):
            try:
                await self.docker.call("DELETE", f"/networks/{nid}", ok=(200, 204, 404))
                return
            except DockerError as e:
                if attempt == 19:
                    print(f"testapiserver: removing the network {nid[:12]}: {e}",
                          file=sys.stderr, flush=True)
                    return
            await asyncio.sleep(0.25)

    async def remove_networks(self):
        found = await self.docker.call("GET", "/networks", params={
            "filters": json.dumps({"label": [f"{LABEL_INSTANCE}={self.instance_id}"]})})
        await asyncio.gather(*(self.remove_network(n["Id"]) for n in found))

    async def remove_volume(self, name):
        """Removes a Docker volume; True when it is gone. A volume that a container still has
        (the finished pod of a deleted claim: its container stays until the pod is deleted)
        cannot go yet: False."""
        try:
            await self.docker.call("DELETE", f"/volumes/{name}", ok=(200, 204, 404))
            return True
        except DockerError as e:
            if e.status != 409:
                print(f"testapiserver: removing the volume {name}: {e}", file=sys.stderr,
                      flush=True)
            return False

    async def remove_released_volumes(self):
        for name in list(self.released_volumes):
            if await self.remove_volume(name):
                self.released_volumes.discard(name)

    async def remove_volumes(self):
        """The volumes of this server's claims (and any other volume it labelled), once no
        container has them."""
        found = await self.docker.call("GET", "/volumes", params={
            "filters": json.dumps({"label": [f"{LABEL_INSTANCE}={self.instance_id}"]})})
        await asyncio.gather(*(self.remove_volume(v["Name"]) for v in found.get("Volumes") or []))

    @staticmethod
    def server_alive(labels):
        pid = int((labels or {}).get(LABEL_PID, "0") or 0)
        if pid <= 0:
            return False
        try:
            os.kill(pid, 0)
            # (a killed server whose parent has not reaped it yet is a zombie)
            with open(f"/proc/{pid}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0] != "Z"
        except (ProcessLookupError, FileNotFoundError):
            return False
        except PermissionError:
            return True

    async def sweep_dead_servers(self):
        """Containers, then networks and volumes, left by a server of this host that died
        without its shutdown."""
        filters = json.dumps({"label": [f"{LABEL_HOST}={socket.gethostname()}"]})
        found = await self.docker.call("GET", "/containers/json",
                                       params={"all": "1", "filters": filters})
        for c in found:
            if not self.server_alive(c["Labels"]):
                await self.remove_container(c["Id"])
        for n in await self.docker.call("GET", "/networks", params={"filters": filters}):
            if not self.server_alive(n.get("Labels")):
                await self.remove_network(n["Id"])
        found = await self.docker.call("GET", "/volumes", params={"filters": filters})
        for v in found.get("Volumes") or []:
            if not self.server_alive(v.get("Labels")):
                await self.remove_volume(v["Name"])

    def user_of(self, request):
        auth = request.headers.get("Authorization", "")
        if auth:
            scheme, _, token = auth.partition(" ")
            if scheme.lower() == "bearer" and token.strip() in self.tokens:
                return self.tokens[token.strip()]
            return None  # a presented but invalid token is 401 even with a certificate
        transport = request.transport
        cert = transport.get_extra_info("peercert") if transport else None
        if cert:
            subject = dict(x[0] for x in cert.get("subject", ()))
            return subject.get("commonName")
        return None

    # -- middleware ----------------------------------------------------------------------------

    @web.middleware
    async def middleware(self, request, handler):
        try:
            if request.path not in ("/healthz", "/livez", "/readyz"):
                user = self.user_of(request)
                if user is None:
                    raise ApiError(401, "Unauthorized", "Unauthorized")
                request["user"] = user
            return await handler(request)
        except ApiError as e:
            return e.response()
        except web.HTTPNotFound:
            return ApiError(404, "NotFound", "the server could not find the requested resource",
                            {}).response()
        except web.HTTPMethodNotAllowed:
            return ApiError(405, "MethodNotAllowed",
                            "the server does not allow this method on the requested resource",
                            {}).response()
        except web.HTTPException:
            raise
        except Exception as e:
            print(f"testapiserver: {request.method} {request.path_qs}: {e!r}", file=sys.stderr,
                  flush=True)
            return ApiError(500, "InternalError",
                            f"Internal error occurred: {e}").response()

    # -- discovery -----------------------------------------------------------------------------

    async def health(self, request):
        return web.Response(text="ok")

    async def version(self, request):
        return web.json_response(KUBE_VERSION)

    async def api(self, request):
        host = request.host
        return web.json_response({"kind": "APIVersions", "versions": ["v1"],
                                  "serverAddressByClientCIDRs": [
                                      {"clientCIDR": "0.0.0.0/0", "serverAddress": host}]})

    async def api_v1(self, request):
        def res(name, kind, verbs, namespaced=True, short=None):
            r = {"name": name, "singularName": "" if "/" in name else name.rstrip("s"),
                 "namespaced": namespaced, "kind": kind, "verbs": verbs}
            if short:
                r["shortNames"] = short
            return r
        return web.json_response({"kind": "APIResourceList", "groupVersion": "v1", "resources": [
            res("namespaces", "Namespace", ["get"], namespaced=False, short=["ns"]),
            res("pods", "Pod", ["create", "delete", "deletecollection", "get", "list", "watch"],
                short=["po"]),
            res("pods/attach", "PodAttachOptions", ["create", "get"]),
            res("pods/exec", "PodExecOptions", ["create", "get"]),
            res("pods/log", "Pod", ["get"]),
            res("pods/status", "Pod", ["get"]),
            res("services", "Service", ["create", "delete", "get", "list", "watch"],
                short=["svc"]),
            res("persistentvolumeclaims", "PersistentVolumeClaim",
                ["create", "delete", "get", "list", "watch"], short=["pvc"]),
        ]})

    def group(self):
        gv = {"groupVersion": "networking.k8s.io/v1", "version": "v1"}
        return {"name": "networking.k8s.io", "versions": [gv], "preferredVersion": gv}

    async def apis(self, request):
        return web.json_response({"kind": "APIGroupList", "apiVersion": "v1",
                                  "groups": [self.group()]})

    async def apis_networking(self, request):
        return web.json_response(dict(kind="APIGroup", apiVersion="v1", **self.group()))

    async def apis_networking_v1(self, request):
        return web.json_response({
            "kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "networking.k8s.io/v1",
            "resources": [{"name": "networkpolicies", "singularName": "networkpolicy",
                           "namespaced": True, "kind": "NetworkPolicy",
                           "verbs": ["create", "delete", "get", "list", "watch"],
                           "shortNames": ["netpol"]}]})

    # -- namespaces ----------------------------------------------------------------------------

    def check_namespace(self, ns):
        if ns not in self.namespaces:
            raise not_found("namespaces", ns)

    async def get_namespace(self, request):
        ns = request.match_info["ns"]
        self.authorizer.check(request["user"], "get", "namespaces", "", ns)
        self.check_namespace(ns)
        return web.json_response({
            "kind": "Namespace", "apiVersion": "v1",
            "metadata": {"name": ns, "uid": str(random_uuid(ns)), "resourceVersion": "1",
                         "creationTimestamp": self.started_at,
                         "labels": {"kubernetes.io/metadata.name": ns}},
            "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}})

    # -- list and watch ------------------------------------------------------------------------

    async def list_or_watch(self, request, resource, kind, api_version, ns):
        watch = flag(request, "watch")
        self.authorizer.check(request["user"], "watch" if watch else "list", resource, ns or "")
        if ns is not None:
            self.check_namespace(ns)
        labels = parse_label_selector(request.query.get("labelSelector", ""))
        fields = parse_field_selector(resource, request.query.get("fieldSelector", ""))
        if watch:
            return await self.watch(request, resource, ns, labels, fields)
        items = [o for o in self.store.items(resource, ns)
                 if labels_match(labels, o["metadata"].get("labels")) and fields_match(fields, o)]
        return web.json_response({"kind": kind + "List", "apiVersion": api_version,
                                  "metadata": {"resourceVersion": str(self.store.rv)},
                                  "items": items})

    async def watch(self, request, resource, ns, labels, fields):
        w = Watcher(resource, ns, labels, fields)
        rv = request.query.get("resourceVersion", "")
        if rv in ("", "0"):
            # Without a resourceVersion a watch starts with every object as ADDED.
            for o in self.store.items(resource, ns):
                w.offer("ADDED", resource, json.loads(json.dumps(o)))
        else:
            try:
                since = int(rv)
            except ValueError:
                raise bad_request(f'invalid resource version: "{rv}"')
            # The objects as they were at that version are what the watch has 'seen'.
            for at, event, res, obj in self.store.history:
                if at > since:
                    w.offer(event, res, obj)
                elif res == resource:
                    key = (obj["metadata"]["namespace"], obj["metadata"]["name"])
                    if event != "DELETED" and w.matches(obj):
                        w.inside.add(key)
                    else:
                        w.inside.discard(key)
        self.store.watchers.add(w)
        timeout = request.query.get("timeoutSeconds")
        resp = web.StreamResponse(headers={"Content-Type": "application/json",
                                           "Cache-Control": "no-cache, private"})
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        self.watch_responses.add(resp)
        loop = asyncio.get_running_loop()
        end = loop.time() + float(timeout) if timeout else None
        try:
            while not self.stopping.is_set():
                wait = None if end is None else end - loop.time()
                if wait is not None and wait <= 0:
                    break
                getter = asyncio.ensure_future(w.queue.get())
                stopper = asyncio.ensure_future(self.stopping.wait())
                done, _ = await asyncio.wait({getter, stopper}, timeout=wait,
                                             return_when=asyncio.FIRST_COMPLETED)
                stopper.cancel()
                if getter not in done:
                    getter.cancel()
                    continue
                event, obj = getter.result()
                await resp.write(json.dumps({"type": event, "object": obj}).encode() + b"\n")
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            self.store.watchers.discard(w)
            self.watch_responses.discard(resp)
        try:
            await resp.write_eof()
        except ConnectionError:
            pass
        return resp

    # -- pods ----------------------------------------------------------------------------------

    async def pods_collection(self, request):
        ns = request.match_info.get("ns")
        if request.method == "GET":
            return await self.list_or_watch(request, "pods", "Pod", "v1", ns)
        if request.method == "DELETE":
            return await self.delete_pods(request, ns)
        return await self.create_pod(request, ns)

    async def read_body(self, request):
        try:
            text = await request.text()
            return json.loads(text) if text else {}
        except ValueError as e:
            raise bad_request(f"error decoding the request body: {e}")

    def check_schema(self, obj, kind):
        """Every object of a kind the schema has, checked against Kubernetes' own schema when
        asked: unknown fields, wrong types and bad quantities are refused as an API server's
        strict field validation refuses them."""
        if self.schema is None or ("v1", kind) not in self.schema.kinds:
            return
        problems = self.schema.errors(obj)
        if problems:
            raise invalid(kind, (obj.get("metadata") or {}).get("name") or "",
                          [(p.split(":", 1)[0], "FieldValueInvalid", p) for p in problems[:20]])

    def accept_metadata(self, obj, ns, kind):
        """A new object's kind, namespace and name (or generateName), and the metadata the
        apiserver sets; returns its name."""
        meta = obj.setdefault("metadata", {})
        name = meta.get("name") or ""
        if obj.get("kind", kind) != kind or obj.get("apiVersion", "v1") != "v1":
            raise bad_request(f"the API version in the data ({obj.get('apiVersion')}) does not "
                              f"match the expected API version (v1)")
        if meta.get("namespace", ns) != ns:
            raise bad_request("the namespace of the provided object does not match the namespace "
                              "sent on the request")
        if not name:
            if not meta.get("generateName"):
                raise invalid(kind, "", [("metadata.name", "FieldValueRequired",
                                          "Required value: name or generateName is required")])
            name = meta["generateName"] + "".join(random.choice(GENERATE_ALPHABET)
                                                  for _ in range(5))
        if kind == "Service" and (len(name) > 63 or not DNS1035_RE.fullmatch(name)):
            raise invalid(kind, name, [("metadata.name", "FieldValueInvalid",
                                        f'Invalid value: "{name}": a DNS-1035 label must consist '
                                        f"of lower case alphanumeric characters or '-', start "
                                        f"with an alphabetic character, and end with an "
                                        f"alphanumeric character")])
        if len(name) > 253 or not NAME_RE.fullmatch(name):
            raise invalid(kind, name, [("metadata.name", "FieldValueInvalid",
                                        f'Invalid value: "{name}": a lowercase RFC 1123 '
                                        f"subdomain must consist of lower case alphanumeric "
                                        f"characters, '-' or '.', and must start and end with an "
                                        f"alphanumeric character")])
        meta.update({"name": name, "namespace": ns, "uid": str(random_uuid()),
                     "creationTimestamp": now()})
        for k in ("resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds"):
            meta.pop(k, None)
        return name

    async def create_pod(self, request, ns):
        pod = await self.read_body(request)
        self.check_schema(pod, "Pod")
        self.authorizer.check(request["user"], "create", "pods", ns)
        self.check_namespace(ns)
        name = self.accept_metadata(pod, ns, "Pod")
        default_pod(pod)
        validate_pod(pod)
        rc = pod["spec"].get("runtimeClassName")
        if rc and rc not in self.runtime_classes:
            raise ApiError(403, "Forbidden",
                           f'pod rejected: RuntimeClass "{rc}" not found',
                           {"name": name, "kind": "pods"})
        if self.store.get("pods", ns, name):
            raise ApiError(409, "AlreadyExists", f'pods "{name}" already exists',
                           {"name": name, "kind": "pods"})
        pod["kind"], pod["apiVersion"] = "Pod", "v1"
        pod["status"] = {"phase": "Pending", "qosClass": qos_class(pod["spec"])}
        self.store.put("pods", pod, "ADDED")
        runtime = PodRuntime(self, pod)
        self.pods[(ns, name)] = runtime
        runtime.start()
        return web.json_response(pod, status=201)

    def pod_or_404(self, ns, name):
        pod = self.store.get("pods", ns, name)
        if pod is None:
            raise not_found("pods", name)
        return pod

    async def get_pod(self, request):
        ns, name = request.match_info["ns"], request.match_info["name"]
        self.authorizer.check(request["user"], "get", "pods", ns, name)
        return web.json_response(self.pod_or_404(ns, name))

    async def get_pod_status(self, request):
        ns, name = request.match_info["ns"], request.match_info["name"]
        self.authorizer.check(request["user"], "get", "pods/status", ns, name)
        return web.json_response(self.pod_or_404(ns, name))

    def grace_of(self, request, body, pod):
        value = request.query.get("gracePeriodSeconds")
        if value is None and isinstance(body, dict):
            value = body.get("gracePeriodSeconds")
        if value is None:
            value = pod["spec"].get("terminationGracePeriodSeconds", 30)
        try:
            return max(0, int(value))
        except ValueError:
            raise bad_request(f'invalid gracePeriodSeconds "{value}"')

    def delete_one(self, pod, grace):
        """Marks the pod deleted; with grace 0 (or nothing running) it is gone at once."""
        ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        runtime = self.pods.get((ns, name))
        meta = pod["metadata"]
        if runtime and (runtime.terminal.is_set() or runtime.container_id is None) and grace:
            grace = 0  # nothing to stop: a pod that is not running goes at once
        meta.setdefault("deletionTimestamp", now())
        meta["deletionGracePeriodSeconds"] = grace
        if grace == 0:
            answer = json.loads(json.dumps(pod))
            self.store.remove("pods", pod)
            self.pods.pop((ns, name), None)
            if runtime:
                # Marked now, not when the spawned removal first runs: a status the pod's
                # start publishes in between would otherwise put the deleted pod back.
                runtime.deleting = True
                self.spawn(runtime.remove(0))
            return answer
        self.store.put("pods", pod, "MODIFIED")
        answer = json.loads(json.dumps(pod))

        async def graceful():
            await runtime.remove(grace)
            if self.store.get("pods", ns, name) is pod:
                self.store.remove("pods", pod)
            self.pods.pop((ns, name), None)
        runtime.deleting = True
        self.spawn(graceful())
        return answer

    async def delete_pod(self, request):
        ns, name = request.match_info["ns"], request.match_info["name"]
        self.authorizer.check(request["user"], "delete", "pods", ns, name)
        body = await self.read_body(request)
        pod = self.pod_or_404(ns, name)
        if pod["metadata"].get("deletionTimestamp") and self.grace_of(request, body, pod) != 0:
            return web.json_response(pod)
        return web.json_response(self.delete_one(pod, self.grace_of(request, body, pod)))

    async def delete_pods(self, request, ns):
        self.authorizer.check(request["user"], "deletecollection", "pods", ns)
        self.check_namespace(ns)
        body = await self.read_body(request)
        labels = parse_label_selector(request.query.get("labelSelector", ""))
        fields = parse_field_selector("pods", request.query.get("fieldSelector", ""))
        items = [self.delete_one(p, self.grace_of(request, body, p))
                 for p in self.store.items("pods", ns)
                 if labels_match(labels, p["metadata"].get("labels")) and fields_match(fields, p)]
        return web.json_response({"kind": "PodList", "apiVersion": "v1",
                                  "metadata": {"resourceVersion": str(self.store.rv)},
                                  "items": items})

    async def pod_log(self, request):
        ns, name = request.match_info["ns"], request.match_info["name"]
        self.authorizer.check(request["user"], "get", "pods/log", ns, name)
        self.pod_or_404(ns, name)
        runtime = self.pods.get((ns, name))
        if not runtime or not runtime.container_id:
            raise bad_request(f'container "{runtime.container_spec()["name"] if runtime else ""}"'
                              f' in pod "{name}" is waiting to start: ContainerCreating')
        raw = await self.docker.call("GET", f"/containers/{runtime.container_id}/logs",
                                     params={"stdout": "1", "stderr": "1"})
        out = raw if runtime.container_spec().get("tty") else demux(raw)
        return web.Response(body=out, content_type="text/plain")

    # -- attach and exec -----------------------------------------------------------------------

    async def stream_request(self, request, sub):
        ns, name = request.match_info["ns"], request.match_info["name"]
        resource = "pods/" + sub
        user = request["user"]
        websocket = request.headers.get("Upgrade", "").lower() == "websocket"
        self.authorizer.check(user, "get" if request.method == "GET" else "create", resource, ns,
                              name)
        if websocket and self.authorizer.websocket_create_check:
            self.authorizer.check(user, "create", resource, ns, name)
        pod = self.pod_or_404(ns, name)
        if not websocket:
            raise bad_request("Upgrade request required")  # (SPDY is not served here)
        runtime = self.pods.get((ns, name))
        spec = runtime.container_spec()
        container = request.query.get("container", spec["name"])
        if container != spec["name"]:
            raise bad_request(f'container {container} is not valid for pod {name}')
        phase = pod["status"].get("phase")
        if phase in ("Succeeded", "Failed"):
            what = "attach to" if sub == "attach" else "exec into"
            raise bad_request(f"cannot {what} a container in a completed pod; current phase is "
                              f"{phase}")
        if phase != "Running" or not runtime.container_id:
            raise bad_request(f'unable to upgrade connection: container not found ("{container}")')
        stdin, stdout, stderr = flag(request, "stdin"), flag(request, "stdout"), flag(request,
                                                                                        "stderr")
        tty = flag(request, "tty")
        if tty and stderr:
            stderr = False  # (one stream with a terminal, as the kubelet does)
        if not (stdin or stdout or stderr):
            raise bad_request("you must specify at least 1 of stdin, stdout, stderr")
        protocol = choose_protocol(request)
        if protocol is None:
            raise bad_request(f"unable to upgrade connection: requested protocol(s) are not "
                              f"supported: {request.headers.get('Sec-WebSocket-Protocol', '')}; "
                              f"supports [{PROTOCOL_V5} {PROTOCOL_V4}]")
        if sub == "exec":
            command = request.query.getall("command", [])
            if not command:
                raise bad_request("you must specify at least one command for the container")
        return runtime, WebSocketStreams(request, protocol, stdin, stdout, stderr, tty)

    async def attach(self, request):
        runtime, streams = await self.stream_request(request, "attach")
        cid = runtime.container_id
        spec_tty = bool(runtime.container_spec().get("tty"))
        params = {"stream": "1", "stdin": "1" if streams.stdin else "0",
                  "stdout": "1" if streams.stdout else "0",
                  "stderr": "1" if streams.stderr else "0"}
        try:
            reader, writer = await self.docker.hijack(
                f"/containers/{cid}/attach?{urllib.parse.urlencode(params)}", None)
        except DockerError as e:
            raise ApiError(500, "InternalError", f"error attaching to container: {e.message}")
        await streams.open()
        self.websockets.add(streams.ws)

        async def resize(w, h):
            if spec_tty:
                await self.docker.call("POST", f"/containers/{cid}/resize",
                                       params={"w": w, "h": h})
        try:
            ended = await bridge(streams, reader, writer, spec_tty, resize)
            if ended:
                await streams.finish({"metadata": {}, "status": "Success"})
        finally:
            self.websockets.discard(streams.ws)
        return streams.ws

    async def exec(self, request):
        runtime, streams = await self.stream_request(request, "exec")
        cid = runtime.container_id
        command = request.query.getall("command")
        try:
            created = await self.docker.call("POST", f"/containers/{cid}/exec", body={
                "AttachStdin": streams.stdin, "AttachStdout": streams.stdout,
                "AttachStderr": streams.stderr, "Tty": streams.tty, "Cmd": command})
            reader, writer = await self.docker.hijack(f"/exec/{created['Id']}/start",
                                                      {"Detach": False, "Tty": streams.tty})
        except DockerError as e:
            raise ApiError(500, "InternalError", f"error executing command in container: "
                                                 f"{e.message}")
        await streams.open()
        self.websockets.add(streams.ws)
        eid = created["Id"]

        async def resize(w, h):
            if streams.tty:
                await self.docker.call("POST", f"/exec/{eid}/resize", params={"w": w, "h": h})
        try:
            ended = await bridge(streams, reader, writer, streams.tty, resize)
            if ended:
                info = await self.docker.call("GET", f"/exec/{eid}/json")
                for _ in range(50):  # (the stream can end a moment before the exit is recorded)
                    if not info.get("Running"):
                        break
                    await asyncio.sleep(0.02)
                    info = await self.docker.call("GET", f"/exec/{eid}/json")
                code = info.get("ExitCode") or 0
                if code == 0:
                    status = {"metadata": {}, "status": "Success"}
                else:
                    # kubelet pkg/kubelet/cri/streaming/remotecommand/exec.go
                    status = {"metadata": {}, "status": "Failure",
                              "message": f"command terminated with non-zero exit code: error "
                                         f"executing command {command}, exit code {code}",
                              "reason": "NonZeroExitCode",
                              "details": {"causes": [{"reason": "ExitCode",
                                                      "message": str(code)}]}}
                await streams.finish(status)
        finally:
            self.websockets.discard(streams.ws)
        return streams.ws

    # -- the container made from a pod ---------------------------------------------------------

    async def image_info(self, image):
        try:
            info = await self.docker.call("GET", f"/images/{image}/json")
        except DockerError as e:
            if e.status == 404:
                return None
            raise
        self.image_ids[image] = info["Id"]
        return info

    def egress_policies(self, ns):
        """The specs of the namespace's policies that restrict egress."""
        specs = (pol.get("spec") or {} for pol in self.store.items("networkpolicies", ns))
        return [spec for spec in specs if "Egress" in (spec.get("policyTypes") or [])]

    def network_for(self, pod):
        """The pod's own network, from the policies that select it and restrict its egress (their
        rules add up, as in a cluster):
        - no such policy: --pod-network (no network at all when it is not given);
        - a rule that reaches more than pods (no `to`, a namespaceSelector, an ipBlock): the same
          (an approximation: it counts as all egress);
        - rules that all reach pods only (podSelector peers): the cluster network alone, where
          the pods they name are (see join_cluster);
        - no rule at all: no network.
        The ports of the rules are not enforced."""
        own = self.args.pod_network or "none"
        labels = pod["metadata"].get("labels") or {}
        policies = [spec for spec in self.egress_policies(pod["metadata"]["namespace"])
                    if labels_match(selector_from_label_selector(spec.get("podSelector") or {}),
                                    labels)]
        if not policies:
            return own
        rules = [rule for spec in policies for rule in spec.get("egress") or []]
        if not all(to_pods_only(rule) for rule in rules):
            return own
        return self.cluster.name if rules else "none"

    def reached_by_egress_rule(self, pod):
        """Whether a rule that restricts some pods to pods names this one: those must reach it
        on the cluster network."""
        labels = pod["metadata"].get("labels") or {}
        for spec in self.egress_policies(pod["metadata"]["namespace"]):
            for rule in spec.get("egress") or []:
                if to_pods_only(rule) and any(
                        labels_match(selector_from_label_selector(peer["podSelector"] or {}),
                                     labels) for peer in rule["to"]):
                    return True
        return False

    def services_of(self, pod):
        """The Services of the pod's namespace that select it, by name."""
        labels = pod["metadata"].get("labels") or {}
        return [svc for svc in self.store.items("services", pod["metadata"]["namespace"])
                if all(labels.get(k) == v for k, v in svc["spec"]["selector"].items())]

    async def join_cluster(self, runtime, body):
        """Puts the pod's container on the cluster network when it belongs there: it is its own
        network, an egress rule names the pod, or a Service selects it. A pod that a Service
        selects gets the Service's cluster IP as its address there, unless another pod holds it
        (one endpoint per Service; the first Service by name whose address is free when the pod
        starts). On its own network or none, the container is made on the cluster network;
        otherwise the EndpointConfig to connect it with once made is returned (None: nothing
        to connect)."""
        pod, host = runtime.pod, body["HostConfig"]
        if (host["NetworkMode"] != self.cluster.name and not self.services_of(pod)
                and not self.reached_by_egress_rule(pod)):
            return None
        await self.cluster.ensure()
        endpoint = {}
        for svc in self.services_of(pod):
            ip = svc["spec"]["clusterIP"]
            if ip not in self.address_holders:
                self.address_holders[ip] = runtime
                runtime.address = ip
                endpoint = {"IPAMConfig": {"IPv4Address": ip}}
                break
        if host["NetworkMode"] in ("none", self.cluster.name):
            # (a pod without egress that others reach: on the cluster network, it reaches them
            # too; ingress is not enforced either)
            host["NetworkMode"] = self.cluster.name
            body["NetworkDisabled"] = False
            body["NetworkingConfig"] = {"EndpointsConfig": {self.cluster.name: endpoint}}
            return None
        return endpoint

    async def docker_body(self, pod):
        meta, spec = pod["metadata"], pod["spec"]
        c = spec["containers"][0]
        image = await self.image_info(c["image"])
        if image is None:
            raise PodConfigError("ErrImagePull",
                                 f'image "{c["image"]}" is not on this node (this test API server '
                                 f"does not pull images)")
        pod_sc, sc = spec.get("securityContext") or {}, c.get("securityContext") or {}

        def pick(key):
            return sc[key] if key in sc else pod_sc.get(key)

        uid, gid = pick("runAsUser"), pick("runAsGroup")
        user = "" if uid is None else str(uid) + ("" if gid is None else f":{gid}")
        if uid is None and gid is not None:
            user = (image["Config"].get("User") or "0").split(":")[0] + f":{gid}"
        if pick("runAsNonRoot"):
            # kubelet pkg/kubelet/kuberuntime/security_context_others.go verifyRunAsNonRoot
            if uid is None:
                image_user = (image["Config"].get("User") or "").split(":")[0]
                if not image_user.isdigit() and image_user not in ("",):
                    raise PodConfigError("CreateContainerConfigError",
                                         f"container has runAsNonRoot and image has non-numeric "
                                         f"user ({image_user}), cannot verify user is non-root "
                                         f"(pod: \"{meta['name']}_{meta['namespace']}"
                                         f"({meta['uid']})\", container: {c['name']})")
                if image_user in ("", "0"):
                    raise PodConfigError("CreateContainerConfigError",
                                         "container has runAsNonRoot and image will run as root "
                                         f"(pod: \"{meta['name']}_{meta['namespace']}"
                                         f"({meta['uid']})\", container: {c['name']})")
            elif uid == 0:
                raise PodConfigError("CreateContainerConfigError",
                                     "container's runAsUser breaks non-root policy "
                                     f"(pod: \"{meta['name']}_{meta['namespace']}"
                                     f"({meta['uid']})\", container: {c['name']})")
        groups = [str(g) for g in pod_sc.get("supplementalGroups") or []]
        if pod_sc.get("fsGroup") is not None:
            groups.append(str(pod_sc["fsGroup"]))
        caps = sc.get("capabilities") or {}
        security_opt = []
        if sc.get("allowPrivilegeEscalation") is False:
            security_opt.append("no-new-privileges")
        seccomp = (sc.get("seccompProfile") or pod_sc.get("seccompProfile") or {}).get("type")
        # Without a profile the kubelet runs a container Unconfined (unless --seccomp-default).
        if seccomp in (None, "Unconfined"):
            security_opt.append("seccomp=unconfined")
        elif seccomp != "RuntimeDefault":
            raise PodConfigError("CreateContainerConfigError",
                                 f"seccomp profile type {seccomp} is not served by this test "
                                 f"API server")
        limits = (c.get("resources") or {}).get("limits") or {}
        memory = int(parse_quantity(limits["memory"])) if "memory" in limits else 0
        host = {
            "NetworkMode": self.network_for(pod),
            "ReadonlyRootfs": bool(sc.get("readOnlyRootFilesystem")),
            "CapDrop": caps.get("drop") or None,
            "CapAdd": caps.get("add") or None,
            "Privileged": bool(sc.get("privileged")),
            "SecurityOpt": security_opt or None,
            "GroupAdd": groups or None,
        }
        if memory:
            host["Memory"] = memory
            host["MemorySwap"] = memory  # (no swap for pods)
        if "cpu" in limits:
            host["NanoCpus"] = int(parse_quantity(limits["cpu"]) * 1e9)
        if spec.get("runtimeClassName"):
            host["Runtime"] = self.runtime_classes[spec["runtimeClassName"]] or "runc"
        # ClusterFirst (and Default): the engine's own resolver. dnsPolicy None: the pod's
        # dnsConfig alone.
        dns = spec.get("dnsConfig") or {}
        if spec.get("dnsPolicy") == "None":
            host["Dns"] = dns.get("nameservers") or []
        if dns.get("searches"):
            host["DnsSearch"] = dns["searches"]
        if dns.get("options"):
            host["DnsOptions"] = [o["name"] + (f":{o['value']}" if o.get("value") else "")
                                  for o in dns["options"] if o.get("name")]
        volumes = {v["name"]: v for v in spec.get("volumes") or []}
        mounts = []
        for m in c.get("volumeMounts") or []:
            source = volumes[m["name"]].get("persistentVolumeClaim")
            if source:
                # The claim's own Docker volume, as it is (not filled from the image). The
                # engine mounts parents before what is nested in them, whatever the order here.
                claim = self.store.get("persistentvolumeclaims", meta["namespace"],
                                       source["claimName"])
                if claim is None:
                    raise PodConfigError("ContainerCreating",
                                         f'persistentvolumeclaim "{source["claimName"]}" not '
                                         f"found")
                mounts.append({"Type": "volume", "Source": volume_of(claim),
                               "Target": m["mountPath"],
                               "ReadOnly": bool(m.get("readOnly") or source.get("readOnly")),
                               "VolumeOptions": {"NoCopy": True}})
                continue
            ed = volumes[m["name"]].get("emptyDir") or {}
            # An emptyDir is an empty, world-writable (0777) directory. Here it is a tmpfs in an
            # anonymous volume (removed with the container), not copied from the image: a tmpfs
            # mount of the engine's own (HostConfig.Tmpfs) takes the mode of the image's
            # directory. Size: sizeLimit, else the pod's memory limit, as for a memory-backed
            # emptyDir; a disk emptyDir is a tmpfs here too (the kubelet would evict past
            # sizeLimit instead of ENOSPC).
            size = ed.get("sizeLimit")
            opts = ["mode=0777", "nosuid", "nodev"]
            if size is not None:
                opts.append(f"size={int(parse_quantity(size))}")
            elif memory:
                opts.append(f"size={memory}")
            mounts.append({"Type": "volume", "Target": m["mountPath"],
                           "ReadOnly": bool(m.get("readOnly")),
                           "VolumeOptions": {
                               "NoCopy": True,
                               "Labels": {LABEL_INSTANCE: self.instance_id,
                                          "io.kubernetes.pod.uid": meta["uid"]},
                               "DriverConfig": {"Name": "local", "Options": {
                                   "type": "tmpfs", "device": "tmpfs", "o": ",".join(opts)}}}})
        host["Mounts"] = mounts
        env = [f"HOSTNAME={meta['name'][:63]}"]
        # The variables every pod gets for the cluster's API service, and with
        # enableServiceLinks those of the namespace's Services.
        env += ["KUBERNETES_SERVICE_HOST=10.96.0.1", "KUBERNETES_SERVICE_PORT=443",
                "KUBERNETES_SERVICE_PORT_HTTPS=443", "KUBERNETES_PORT=tcp://10.96.0.1:443",
                "KUBERNETES_PORT_443_TCP=tcp://10.96.0.1:443",
                "KUBERNETES_PORT_443_TCP_PROTO=tcp", "KUBERNETES_PORT_443_TCP_PORT=443",
                "KUBERNETES_PORT_443_TCP_ADDR=10.96.0.1"]
        if spec.get("enableServiceLinks", True):
            own = {e.get("name") for e in c.get("env") or []}
            env += [f"{k}={v}" for k, v in service_links(self.store.items("services",
                                                                          meta["namespace"]))
                    if k not in own]
        for e in c.get("env") or []:
            if "valueFrom" in e:
                path = e["valueFrom"]["fieldRef"]["fieldPath"]
                value = {"metadata.name": meta["name"], "metadata.namespace": meta["namespace"],
                         "metadata.uid": meta["uid"], "spec.nodeName": NODE_NAME,
                         "spec.serviceAccountName": spec.get("serviceAccountName", "")}[path]
            else:
                value = e.get("value", "")
            env.append(f"{e['name']}={expand(value, env)}")
        body = {
            "Image": c["image"], "Env": env, "User": user, "Hostname": meta["name"][:63],
            "WorkingDir": c.get("workingDir", ""), "Tty": bool(c.get("tty")),
            "OpenStdin": bool(c.get("stdin")), "StdinOnce": bool(c.get("stdinOnce")),
            "AttachStdin": bool(c.get("stdin")), "AttachStdout": True, "AttachStderr": True,
            "NetworkDisabled": host["NetworkMode"] == "none",
            "Labels": {**self.docker_labels(),
                       "io.kubernetes.pod.name": meta["name"],
                       "io.kubernetes.pod.namespace": meta["namespace"],
                       "io.kubernetes.pod.uid": meta["uid"],
                       "io.kubernetes.container.name": c["name"]},
            "HostConfig": host,
        }
        # command replaces the image's ENTRYPOINT and args its CMD; with command alone the
        # image's CMD is not used (the Docker engine drops it when Entrypoint is given).
        if c.get("command"):
            body["Entrypoint"] = c["command"]
            body["Cmd"] = c.get("args") or None
        elif c.get("args"):
            body["Cmd"] = c["args"]
        return body

    # -- services ------------------------------------------------------------------------------

    async def services_collection(self, request):
        ns = request.match_info["ns"]
        if request.method == "GET":
            return await self.list_or_watch(request, "services", "Service", "v1", ns)
        if request.method != "POST":
            raise web.HTTPMethodNotAllowed(request.method, ["GET", "POST"])
        svc = await self.read_body(request)
        self.authorizer.check(request["user"], "create", "services", ns)
        self.check_namespace(ns)
        self.check_schema(svc, "Service")
        name = self.accept_metadata(svc, ns, "Service")
        default_service(svc)
        validate_service(svc)
        for attempt in range(2):  # (before the network is made, and after)
            if self.store.get("services", ns, name):
                raise ApiError(409, "AlreadyExists", f'services "{name}" already exists',
                               {"name": name, "kind": "services"})
            if attempt == 0:
                await self.cluster.ensure()
        ip = self.cluster.allocate()
        svc["spec"]["clusterIP"], svc["spec"]["clusterIPs"] = ip, [ip]
        svc["kind"], svc["apiVersion"] = "Service", "v1"
        svc["status"] = {"loadBalancer": {}}
        self.store.put("services", svc, "ADDED")
        return web.json_response(svc, status=201)

    async def service(self, request):
        ns, name = request.match_info["ns"], request.match_info["name"]
        verb = "get" if request.method == "GET" else "delete"
        self.authorizer.check(request["user"], verb, "services", ns, name)
        svc = self.store.get("services", ns, name)
        if svc is None:
            raise not_found("services", name)
        if verb == "delete":
            # The apiserver answers a Service's delete with the object. The pod that has its
            # address keeps it until the pod ends, and the address is not given out before.
            self.store.remove("services", svc)
        return web.json_response(svc)

    async def all_services(self, request):
        return await self.list_or_watch(request, "services", "Service", "v1", None)

    # -- persistent volume claims --------------------------------------------------------------

    async def claims_collection(self, request):
        ns = request.match_info["ns"]
        if request.method == "GET":
            return await self.list_or_watch(request, "persistentvolumeclaims",
                                            "PersistentVolumeClaim", "v1", ns)
        if request.method != "POST":
            raise web.HTTPMethodNotAllowed(request.method, ["GET", "POST"])
        pvc = await self.read_body(request)
        self.authorizer.check(request["user"], "create", "persistentvolumeclaims", ns)
        self.check_namespace(ns)
        self.check_schema(pvc, "PersistentVolumeClaim")
        name = self.accept_metadata(pvc, ns, "PersistentVolumeClaim")
        default_claim(pvc)
        validate_claim(pvc)
        exists = ApiError(409, "AlreadyExists",
                          f'persistentvolumeclaims "{name}" already exists',
                          {"name": name, "kind": "persistentvolumeclaims"})
        if self.store.get("persistentvolumeclaims", ns, name):
            raise exists
        meta, spec = pvc["metadata"], pvc["spec"]
        # Admission's pvc-protection finalizer; bound at once, as by a provisioner whose volume
        # is ready (binding mode Immediate), to a volume of the size asked for.
        meta["finalizers"] = sorted(set(meta.get("finalizers") or []) | {PVC_PROTECTION})
        meta.setdefault("annotations", {}).update({"pv.kubernetes.io/bind-completed": "yes",
                                                  "pv.kubernetes.io/bound-by-controller": "yes"})
        spec["volumeName"] = "pvc-" + meta["uid"]
        pvc["kind"], pvc["apiVersion"] = "PersistentVolumeClaim", "v1"
        pvc["status"] = {"phase": "Bound", "accessModes": list(spec["accessModes"]),
                         "capacity": {"storage": spec["resources"]["requests"]["storage"]}}
        volume = volume_of(pvc)
        try:
            await self.docker.call("POST", "/volumes/create", body={
                "Name": volume, "Driver": "local",
                "Labels": {**self.docker_labels(), "io.kubernetes.pvc.name": name,
                           "io.kubernetes.pvc.namespace": ns,
                           "io.kubernetes.pvc.uid": meta["uid"]}})
        except DockerError as e:
            raise ApiError(500, "InternalError",
                           f"Internal error occurred: creating the volume {volume}: {e.message}")
        if self.store.get("persistentvolumeclaims", ns, name):  # (made meanwhile)
            await self.remove_volume(volume)
            raise exists
        self.store.put("persistentvolumeclaims", pvc, "ADDED")
        return web.json_response(pvc, status=201)

    async def claim(self, request):
        ns, name = request.match_info["ns"], request.match_info["name"]
        verb = "get" if request.method == "GET" else "delete"
        self.authorizer.check(request["user"], verb, "persistentvolumeclaims", ns, name)
        pvc = self.store.get("persistentvolumeclaims", ns, name)
        if pvc is None:
            raise not_found("persistentvolumeclaims", name)
        if verb == "get":
            return web.json_response(pvc)
        await self.read_body(request)  # (DeleteOptions: nothing in them applies here)
        meta = pvc["metadata"]
        if meta.get("deletionTimestamp"):
            return web.json_response(pvc)
        # The finalizer of pvc-protection: the claim stays, marked, while a pod that is
        # scheduled and not finished uses it.
        meta["deletionTimestamp"] = now()
        meta["deletionGracePeriodSeconds"] = 0
        if self.claim_users(pvc):
            self.store.put("persistentvolumeclaims", pvc, "MODIFIED")
            return web.json_response(pvc)
        answer = json.loads(json.dumps(pvc))
        self.release_claim(pvc)
        return web.json_response(answer)

    async def all_claims(self, request):
        return await self.list_or_watch(request, "persistentvolumeclaims",
                                        "PersistentVolumeClaim", "v1", None)

    def claim_users(self, pvc):
        """The pods that keep a claim from going (the pvc-protection controller's podUsesPVC):
        scheduled onto the node and not finished."""
        name = pvc["metadata"]["name"]
        return [p for p in self.store.items("pods", pvc["metadata"]["namespace"])
                if p["spec"].get("nodeName")
                and p["status"].get("phase") not in ("Succeeded", "Failed")
                and any(c.get("claimName") == name for c in claim_names(p).values())]

    def release_claim(self, pvc):
        """The finalizer's end: the claim removed (DELETED), its volume with it, or once the
        container of a finished pod that still has it is removed."""
        pvc["metadata"]["finalizers"] = [f for f in pvc["metadata"].get("finalizers") or []
                                         if f != PVC_PROTECTION]
        self.store.remove("persistentvolumeclaims", pvc)
        self.volume_groups.pop(pvc["metadata"]["uid"], None)
        self.ownership_locks.pop(pvc["metadata"]["uid"], None)
        volume = volume_of(pvc)
        self.released_volumes.add(volume)

        async def remove():
            if await self.remove_volume(volume):
                self.released_volumes.discard(volume)
        self.spawn(remove())

    def claim_protection(self, event, resource, obj):
        """Store hook: a pod that ended or went may release claims marked for deletion."""
        if resource != "pods" or (event != "DELETED" and obj["status"].get("phase") not in
                                  ("Succeeded", "Failed")):
            return
        for pvc in self.store.items("persistentvolumeclaims", obj["metadata"]["namespace"]):
            if pvc["metadata"].get("deletionTimestamp") and not self.claim_users(pvc):
                self.release_claim(pvc)

    def claim_problem(self, pod):
        """Why the scheduler would not place the pod for its claims (None: nothing)."""
        for source in claim_names(pod).values():
            pvc = self.store.get("persistentvolumeclaims", pod["metadata"]["namespace"],
                                 source["claimName"])
            if pvc is None:
                return f'persistentvolumeclaim "{source["claimName"]}" not found'
            if pvc["metadata"].get("deletionTimestamp"):
                return f'persistentvolumeclaim "{source["claimName"]}" is being deleted'
        return None

    async def set_volume_ownership(self, pod, image):
        """The kubelet's volume ownership management for the pod's claims that it mounts
        read-write, when it has an fsGroup (as fsGroupChangePolicy OnRootMismatch: only when the
        root's group is not the fsGroup), in a short-lived helper container of the pod's image,
        as root, without network. Done once per claim and fsGroup: the sandboxes' users cannot
        change the root's group back (root owns it)."""
        group = (pod["spec"].get("securityContext") or {}).get("fsGroup")
        if group is None:
            return
        for volume_name, source in claim_names(pod).items():
            if source.get("readOnly"):
                continue
            pvc = self.store.get("persistentvolumeclaims", pod["metadata"]["namespace"],
                                 source["claimName"])
            if pvc is None:
                continue
            uid = pvc["metadata"]["uid"]
            async with self.ownership_locks.setdefault(uid, asyncio.Lock()):
                if self.volume_groups.get(uid) == group:
                    continue
                code, output = await self.run_helper(image, volume_of(pvc),
                                                     ["/bin/sh", "-c", OWNERSHIP_SCRIPT, "sh",
                                                      str(group)])
                if code != 0:
                    raise PodConfigError("ContainerCreating",
                                         f'MountVolume.SetUp failed for volume "{volume_name}": '
                                         f"setting its group to {group} failed (exit code "
                                         f"{code}): {output.strip()[-500:]}")
                self.volume_groups[uid] = group

    async def run_helper(self, image, volume, command):
        """Runs command as root in a container of image with the volume at /volume, no network;
        returns (exit code, output). Labelled as the pods' containers are, removed after."""
        created = await self.docker.call("POST", "/containers/create", body={
            "Image": image, "Entrypoint": command, "Cmd": None, "User": "0:0", "WorkingDir": "/",
            "NetworkDisabled": True,
            "Labels": {**self.docker_labels(), LABEL_HELPER: "volume-ownership"},
            "HostConfig": {"NetworkMode": "none", "Mounts": [
                {"Type": "volume", "Source": volume, "Target": "/volume",
                 "VolumeOptions": {"NoCopy": True}}]}})
        cid = created["Id"]
        try:
            await self.docker.call("POST", f"/containers/{cid}/start")
            result = await self.docker.call("POST", f"/containers/{cid}/wait",
                                            params={"condition": "not-running"})
            code = result.get("StatusCode", 1)
            output = ""
            if code != 0:
                output = demux(await self.docker.call("GET", f"/containers/{cid}/logs",
                                                      params={"stdout": "1", "stderr": "1"}))
                output = output.decode(errors="replace")
            return code, output
        finally:
            await asyncio.shield(self.remove_container(cid))

    # -- network policies ----------------------------------------------------------------------

    def add_policy(self, pol, ns):
        meta = pol.setdefault("metadata", {})
        name = meta.get("name")
        if not name:
            raise invalid("NetworkPolicy", "", [("metadata.name", "FieldValueRequired",
                                                 "Required value: name or generateName is "
                                                 "required")])
        if self.store.get("networkpolicies", ns, name):
            raise ApiError(409, "AlreadyExists",
                           f'networkpolicies.networking.k8s.io "{name}" already exists',
                           {"name": name, "group": "networking.k8s.io",
                            "kind": "networkpolicies"})
        spec = pol.setdefault("spec", {})
        if "podSelector" not in spec:
            raise invalid("NetworkPolicy", name, [("spec.podSelector", "FieldValueRequired",
                                                   "Required value")])
        if not spec.get("policyTypes"):
            spec["policyTypes"] = ["Ingress"] + (["Egress"] if spec.get("egress") else [])
        meta.update({"namespace": ns, "uid": str(random_uuid()), "creationTimestamp": now(),
                     "generation": 1})
        pol["kind"], pol["apiVersion"] = "NetworkPolicy", "networking.k8s.io/v1"
        self.store.put("networkpolicies", pol, "ADDED")
        return pol

    async def policies_collection(self, request):
        ns = request.match_info["ns"]
        if request.method == "GET":
            return await self.list_or_watch(request, "networkpolicies", "NetworkPolicy",
                                            "networking.k8s.io/v1", ns)
        self.authorizer.check(request["user"], "create", "networkpolicies", ns)
        self.check_namespace(ns)
        return web.json_response(self.add_policy(await self.read_body(request), ns), status=201)

    async def policy(self, request):
        ns, name = request.match_info["ns"], request.match_info["name"]
        verb = "get" if request.method == "GET" else "delete"
        self.authorizer.check(request["user"], verb, "networkpolicies", ns, name)
        pol = self.store.get("networkpolicies", ns, name)
        if pol is None:
            raise not_found("networkpolicies", name, "networking.k8s.io")
        if verb == "delete":
            self.store.remove("networkpolicies", pol)
            return web.json_response({"kind": "Status", "apiVersion": "v1", "metadata": {},
                                      "status": "Success",
                                      "details": {"name": name, "group": "networking.k8s.io",
                                                  "kind": "networkpolicies",
                                                  "uid": pol["metadata"]["uid"]}})
        return web.json_response(pol)

    # -- setup and shutdown --------------------------------------------------------------------

    def app(self):
        app = web.Application(middlewares=[self.middleware], client_max_size=16 * 2**20)
        r = app.router
        for path in ("/healthz", "/livez", "/readyz"):
            r.add_get(path, self.health)
        for path, handler in (("/version", self.version), ("/api", self.api),
                              ("/api/v1", self.api_v1), ("/apis", self.apis),
                              ("/apis/networking.k8s.io", self.apis_networking),
                              ("/apis/networking.k8s.io/v1", self.apis_networking_v1)):
            r.add_get(path, handler)
            r.add_get(path + "/", handler)  # (the generated clients ask with the slash)
        r.add_get("/api/v1/namespaces/{ns}", self.get_namespace)
        r.add_get("/api/v1/pods", self.pods_collection)
        r.add_route("*", "/api/v1/namespaces/{ns}/pods", self.pods_collection)
        r.add_get("/api/v1/namespaces/{ns}/pods/{name}", self.get_pod)
        r.add_delete("/api/v1/namespaces/{ns}/pods/{name}", self.delete_pod)
        r.add_get("/api/v1/namespaces/{ns}/pods/{name}/status", self.get_pod_status)
        r.add_get("/api/v1/namespaces/{ns}/pods/{name}/log", self.pod_log)
        r.add_route("GET", "/api/v1/namespaces/{ns}/pods/{name}/attach", self.attach)
        r.add_route("POST", "/api/v1/namespaces/{ns}/pods/{name}/attach", self.attach)
        r.add_route("GET", "/api/v1/namespaces/{ns}/pods/{name}/exec", self.exec)
        r.add_route("POST", "/api/v1/namespaces/{ns}/pods/{name}/exec", self.exec)
        r.add_route("*", "/apis/networking.k8s.io/v1/namespaces/{ns}/networkpolicies",
                    self.policies_collection)
        r.add_get("/apis/networking.k8s.io/v1/namespaces/{ns}/networkpolicies/{name}", self.policy)
        r.add_delete("/apis/networking.k8s.io/v1/namespaces/{ns}/networkpolicies/{name}",
                     self.policy)
        r.add_get("/apis/networking.k8s.io/v1/networkpolicies", self.all_policies)
        r.add_get("/api/v1/services", self.all_services)
        r.add_route("*", "/api/v1/namespaces/{ns}/services", self.services_collection)
        r.add_get("/api/v1/namespaces/{ns}/services/{name}", self.service)
        r.add_delete("/api/v1/namespaces/{ns}/services/{name}", self.service)
        r.add_get("/api/v1/persistentvolumeclaims", self.all_claims)
        r.add_route("*", "/api/v1/namespaces/{ns}/persistentvolumeclaims", self.claims_collection)
        r.add_get("/api/v1/namespaces/{ns}/persistentvolumeclaims/{name}", self.claim)
        r.add_delete("/api/v1/namespaces/{ns}/persistentvolumeclaims/{name}", self.claim)
        return app

    async def all_policies(self, request):
        return await self.list_or_watch(request, "networkpolicies", "NetworkPolicy",
                                        "networking.k8s.io/v1", None)

    async def shutdown(self):
        self.stopping.set()
        for ws in list(self.websockets):
            try:
                await ws.close()
            except Exception:
                pass
        for runtime in list(self.pods.values()):
            runtime.deleting = True
            for t in (runtime.task, runtime.deadline_task):
                if t:
                    t.cancel()
        for t in list(self.background):
            t.cancel()
        await self.remove_containers({})
        await self.remove_volumes()  # (once no container has them)
        await self.remove_networks()  # (once no container is on them)


def expand(value, env):
    """$(VAR) references to earlier variables, as the kubelet expands them; $$ escapes."""
    known = dict(e.split("=", 1) for e in env)

    def sub(m):
        if m.group(0) == "$$":
            return "$"
        return known.get(m.group(1), m.group(0))
    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)", sub, value)


def service_links(services):
    """The variables of enableServiceLinks for these Services (kubelet pkg/kubelet/envvars)."""
    out = []
    for svc in services:
        spec = svc["spec"]
        ip, ports = spec.get("clusterIP"), spec.get("ports") or []
        if not ip or ip == "None" or not ports:
            continue
        prefix = svc["metadata"]["name"].upper().replace("-", "_")
        out += [(prefix + "_SERVICE_HOST", ip), (prefix + "_SERVICE_PORT", str(ports[0]["port"]))]
        out += [(f"{prefix}_SERVICE_PORT_{p['name'].upper().replace('-', '_')}", str(p["port"]))
                for p in ports if p.get("name")]
        for i, p in enumerate(ports):
            proto = p.get("protocol") or "TCP"
            url = f"{proto.lower()}://{ip}:{p['port']}"
            if i == 0:
                out.append((prefix + "_PORT", url))
            at = f"{prefix}_PORT_{p['port']}_{proto.upper()}"
            out += [(at, url), (at + "_PROTO", proto.lower()), (at + "_PORT", str(p["port"])),
                    (at + "_ADDR", ip)]
    return out


def random_uuid(seed=None):
    import uuid
    return uuid.uuid5(uuid.NAMESPACE_URL, seed) if seed else uuid.uuid4()


# ---------------------------------------------------------------------------------------------
# Certificates and the kubeconfig.


def openssl(*args):
    subprocess.run(["openssl", *args], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE)


def make_certificates(state, host):
    """A CA, the server's certificate (for 127.0.0.1, localhost and HOST), made with openssl."""
    ca_key, ca_crt = os.path.join(state, "ca.key"), os.path.join(state, "ca.crt")
    key, crt = os.path.join(state, "server.key"), os.path.join(state, "server.crt")
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", ca_key, "-out", ca_crt, "-days", "3", "-subj", "/CN=testapiserver-ca",
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    sans = ["IP:127.0.0.1", "DNS:localhost"]
    if host not in ("127.0.0.1", "localhost", "0.0.0.0", "::"):
        sans.append(("IP:" if re.fullmatch(r"[0-9.]+|[0-9a-fA-F:]+", host) else "DNS:") + host)
    sign(state, "server", "/CN=kube-apiserver", ca_key, ca_crt,
         ["subjectAltName=" + ",".join(sans), "extendedKeyUsage=serverAuth",
          "basicConstraints=CA:FALSE", "keyUsage=critical,digitalSignature,keyEncipherment"])
    return ca_key, ca_crt, key, crt


def sign(state, base, subject, ca_key, ca_crt, extensions):
    key, csr, crt = (os.path.join(state, base + ext) for ext in (".key", ".csr", ".crt"))
    ext = os.path.join(state, base + ".ext")
    with open(ext, "w") as f:
        f.write("\n".join(extensions) + "\n")
    openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", key, "-out", csr, "-subj", subject)
    openssl("x509", "-req", "-in", csr, "-CA", ca_crt, "-CAkey", ca_key, "-CAcreateserial",
            "-out", crt, "-days", "3", "-extfile", ext)
    os.remove(csr)
    os.remove(ext)
    return key, crt


def b64file(path):
    with open(path, "rb") as f:
        return base64.b64encode(f.read()).decode()


def write_kubeconfig(state, url, ca_crt, token, client, namespace):
    users = []
    contexts = []
    if token:
        users.append({"name": "token-user", "user": {"token": token}})
        contexts.append({"name": "testapiserver", "context": {
            "cluster": "testapiserver", "user": "token-user", "namespace": namespace}})
    if client:
        key, crt = client
        users.append({"name": "cert-user", "user": {"client-certificate-data": b64file(crt),
                                                    "client-key-data": b64file(key)}})
        contexts.append({"name": "testapiserver-cert", "context": {
            "cluster": "testapiserver", "user": "cert-user", "namespace": namespace}})
    config = {"apiVersion": "v1", "kind": "Config", "preferences": {},
              "clusters": [{"name": "testapiserver", "cluster": {
                  "server": url, "certificate-authority-data": b64file(ca_crt)}}],
              "users": users, "contexts": contexts,
              "current-context": contexts[0]["name"] if contexts else ""}
    path = os.path.join(state, "kubeconfig")
    with open(path + ".tmp", "w") as f:
        yaml.safe_dump(config, f, sort_keys=False)
    os.chmod(path + ".tmp", 0o600)
    os.replace(path + ".tmp", path)
    return path


def load_policies(server, path, namespace):
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    for d in docs:
        for item in d.get("items", [d]) if d.get("kind", "").endswith("List") else [d]:
            if item.get("kind") == "NetworkPolicy":
                ns = item.get("metadata", {}).get("namespace") or namespace
                if ns not in server.namespaces:
                    server.namespaces.append(ns)
                server.add_policy(item, ns)


async def main(args):
    os.makedirs(args.state_dir, exist_ok=True)
    server = ApiServer(args)
    server.started_at = now()
    server.docker = Docker(args.docker_socket)
    try:
        await server.sweep_dead_servers()
    except (OSError, DockerError) as e:
        raise SystemExit(f"testapiserver: the Docker engine at {args.docker_socket}: {e}")
    namespace = args.context_namespace
    if namespace not in server.namespaces:
        server.namespaces.append(namespace)
    for path in args.network_policies or []:
        load_policies(server, path, namespace)

    if args.tls_cert:
        ca_key, ca_crt, key, crt = None, args.ca_cert or args.tls_cert, args.tls_key, args.tls_cert
    else:
        ca_key, ca_crt, key, crt = make_certificates(args.state_dir, args.host)
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(crt, key)
    client_ca = args.client_ca
    client = None
    if args.make_client_cert:
        if not ca_key:
            raise SystemExit("--make-client-cert needs the generated CA (no --tls-cert)")
        cn, _, org = args.make_client_cert.partition(":")
        client = sign(args.state_dir, "client", f"/CN={cn}" + (f"/O={org}" if org else ""),
                      ca_key, ca_crt, ["extendedKeyUsage=clientAuth", "basicConstraints=CA:FALSE",
                                       "keyUsage=critical,digitalSignature"])
        client_ca = client_ca or ca_crt
    if client_ca:
        # A certificate is asked for and checked when presented; a token works without one.
        ctx.verify_mode = ssl.CERT_OPTIONAL
        ctx.load_verify_locations(client_ca)

    runner = web.AppRunner(server.app(), access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, args.host, args.port, ssl_context=ctx, shutdown_timeout=1)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    host = args.host if args.host not in ("0.0.0.0", "::") else "127.0.0.1"
    url = f"https://{host}:{port}"
    token = (args.token or [""])[0].partition("=")[0]
    kubeconfig = write_kubeconfig(args.state_dir, url, ca_crt, token, client,
                                  namespace)
    with open(os.path.join(args.state_dir, "url"), "w") as f:
        f.write(url + "\n")
    print(f"url: {url}", flush=True)
    print(f"kubeconfig: {kubeconfig}", flush=True)

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.shutdown()
    await runner.cleanup()
    await server.docker.close()
    print("testapiserver: stopped, its containers, volumes and networks removed",
          file=sys.stderr, flush=True)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="0: any free port (printed)")
    p.add_argument("--token", action="append",
                   help=f"a bearer token that authenticates, TOKEN[=USER] (user {DEFAULT_USER} "
                        f"by default); the first goes into the kubeconfig")
    p.add_argument("--client-ca", help="PEM CA whose client certificates authenticate (user: CN)")
    p.add_argument("--make-client-cert", metavar="CN[:O]",
                   help="also make a client certificate with the generated CA, in the "
                        "kubeconfig as context testapiserver-cert")
    p.add_argument("--tls-cert", help="serve this certificate instead of a generated one")
    p.add_argument("--tls-key")
    p.add_argument("--ca-cert", help="the CA of --tls-cert, written into the kubeconfig")
    p.add_argument("--allow", action="append", metavar="VERB:RESOURCE",
                   help="allowed verbs (comma-separated or *) on resources (pods, pods/attach, "
                        "pods/exec, pods/log, pods/status, namespaces, networkpolicies, "
                        "services, persistentvolumeclaims, *); everything is allowed without "
                        "any --allow")
    p.add_argument("--no-websocket-create-check", action="store_true",
                   help="authorize a WebSocket attach/exec by 'get' only, as before 1.35")
    p.add_argument("--namespace", action="append",
                   help="a namespace that exists (default: default and code-sandbox)")
    p.add_argument("--context-namespace", default="code-sandbox",
                   help="the namespace of the kubeconfig's contexts")
    p.add_argument("--network-policies", action="append", metavar="FILE",
                   help="YAML with NetworkPolicy objects to load at start")
    p.add_argument("--pod-network", default="",
                   help="the Docker network pods get when no policy limits their egress to "
                        "pods or to nothing (default: none, no network at all)")
    p.add_argument("--runtime-class", action="append", metavar="NAME[=DOCKER_RUNTIME]",
                   help="a RuntimeClass that exists (its handler: a Docker runtime; runc if "
                        "not given)")
    p.add_argument("--docker-socket",
                   default=os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
                   .removeprefix("unix://"))
    p.add_argument("--validate-schema", metavar="OPENAPI.json",
                   help="refuse (422) every pod, Service or PersistentVolumeClaim that does "
                        "not validate against "
                        "this schema (tests/kubernetes/schema), as strict field validation "
                        "would")
    p.add_argument("--state-dir", required=True)
    args = p.parse_args(argv)
    if not args.token and not args.client_ca and not args.make_client_cert:
        p.error("give --token, --client-ca or --make-client-cert: every request authenticates")
    return args


if __name__ == "__main__":
    asyncio.run(main(parse_args()))
