#!/usr/bin/env python3
"""Cuts Kubernetes' published OpenAPI v3 documents down to the definitions our objects use.

Input: a directory holding the per-group-version documents of one Kubernetes release, either as
kubernetes/kubernetes keeps them (api/openapi-spec/v3/api__v1_openapi.json, ...) or as
kubernetes-sigs/kubectl-validate embeds them (pkg/openapiclient/builtins/1.NN/api/v1.json, ...,
fetched verbatim from that release branch of kubernetes/kubernetes).

Output (stdout): {"x-source": ..., "components": {"schemas": {...}}} with the root kinds below
and every definition they reach through $ref, each copied unchanged.

    cut-schema.py DIR VERSION > k8s-VERSION-openapi-v3.json
"""
import hashlib
import json
import os
import sys

# The kinds packaging/kubernetes/ ships, the pods PodSpec builds and the other objects the
# Kubernetes backend sends (the egress gateway's Service, the workspaces' PersistentVolumeClaims).
ROOTS = {
    "api/v1": ["io.k8s.api.core.v1.Pod", "io.k8s.api.core.v1.Namespace",
               "io.k8s.api.core.v1.ServiceAccount", "io.k8s.api.core.v1.Service",
               "io.k8s.api.core.v1.PersistentVolumeClaim"],
    "apis/rbac.authorization.k8s.io/v1": ["io.k8s.api.rbac.v1.Role",
                                          "io.k8s.api.rbac.v1.RoleBinding"],
    "apis/networking.k8s.io/v1": ["io.k8s.api.networking.v1.NetworkPolicy"],
}


def document_path(directory, group_version):
    # kubectl-validate's layout, then kubernetes/kubernetes' own.
    candidates = [os.path.join(directory, group_version + ".json"),
                  os.path.join(directory, group_version.replace("/", "__") + "_openapi.json")]
    for path in candidates:
        if os.path.exists(path):
            return path
    sys.exit("no OpenAPI document for %s in %s" % (group_version, directory))


def refs(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value.rsplit("/", 1)[-1]
            else:
                yield from refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from refs(value)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    directory, version = sys.argv[1], sys.argv[2]
    schemas, sources = {}, {}
    for group_version, roots in ROOTS.items():
        path = document_path(directory, group_version)
        with open(path, "rb") as f:
            raw = f.read()
        sources[group_version] = {"file": os.path.relpath(path, directory),
                                  "sha256": hashlib.sha256(raw).hexdigest()}
        available = json.loads(raw)["components"]["schemas"]
        pending = list(roots)
        while pending:
            name = pending.pop()
            if name in schemas:
                if schemas[name] != available.get(name, schemas[name]):
                    sys.exit("%s differs between documents" % name)
                continue
            schemas[name] = available[name]
            pending.extend(refs(available[name]))
    out = {
        "x-source": {
            "kubernetes": version,
            "documents": sources,
            "roots": sorted(r for roots in ROOTS.values() for r in roots),
            "cut-by": "tests/kubernetes/schema/cut-schema.py",
        },
        "components": {"schemas": dict(sorted(schemas.items()))},
    }
    json.dump(out, sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
