#!/usr/bin/env python3
"""Checks the objects we send to Kubernetes against Kubernetes' own OpenAPI schema.

    validate.py --podspec PATH/unit_podspec [--manifests DIR] [--schema FILE]

- every pod PodSpec builds (unit_podspec's writeForSchemaCheck writes them: defaults, network,
  a runtimeClass with a node selector, pass-through variables, a session with small limits and an
  image prefix, an allow-list pod, the egress gateway's pod and Service (PodGateway), and each
  language of resources/languages.json);
- every object in packaging/kubernetes/*.yaml;

against k8s-1.35-openapi-v3.json (the definitions they use, cut from Kubernetes 1.35's published
OpenAPI v3 documents by cut-schema.py). The check is as strict as an API server's strict field
validation: $refs resolved, unknown fields refused, required fields, JSON types, enums where the
schema has them (Kubernetes 1.35 publishes none: its enums are only in the descriptions), and
resource quantities parsed by the grammar the Quantity definition states. Before anything is
trusted, the validator must refuse a set of broken objects, so that a check that passes
everything cannot pass this test.

Exit status 0 when all is valid, 1 otherwise.
"""
import argparse
import copy
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

try:
    import jsonschema
    import yaml
except ImportError as e:  # ctest reports 77 as skipped: install python3-jsonschema python3-yaml
    print("skipped: %s (Debian: python3-jsonschema, python3-yaml)" % e)
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
REF_PREFIX = "#/components/schemas/"
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
# <quantity> ::= <signedNumber><suffix>, as io.k8s.apimachinery.pkg.api.resource.Quantity's
# description states it (binarySI Ki..Ei, decimalSI n u m "" k M G T P E, decimalExponent e<n>).
QUANTITY_RE = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$")


def strict(node):
    """The schema as strict field validation applies it: an object schema that lists its
    properties and says nothing of others refuses them."""
    if isinstance(node, dict):
        out = {k: strict(v) for k, v in node.items()}
        if "$ref" in out and out["$ref"].startswith(REF_PREFIX):
            out["$ref"] = "#/$defs/" + out["$ref"][len(REF_PREFIX):]
        if "properties" in out and "additionalProperties" not in out:
            out["additionalProperties"] = False
        return out
    if isinstance(node, list):
        return [strict(v) for v in node]
    return node


class Schema:
    def __init__(self, path):
        with open(path) as f:
            doc = json.load(f)
        self.source = doc["x-source"]
        self.defs = strict(doc["components"]["schemas"])
        # Quantities: the schema says string or number; the server parses the string.
        self.defs[QUANTITY] = copy.deepcopy(self.defs[QUANTITY])
        self.defs[QUANTITY]["oneOf"][0]["pattern"] = QUANTITY_RE.pattern
        self.kinds = {}
        for name, definition in doc["components"]["schemas"].items():
            for gvk in definition.get("x-kubernetes-group-version-kind", []):
                api = gvk["version"] if not gvk["group"] else gvk["group"] + "/" + gvk["version"]
                self.kinds[(api, gvk["kind"])] = name

    def errors(self, obj):
        """What is wrong with obj, one line each; empty when it validates."""
        if not isinstance(obj, dict):
            return ["not an object"]
        key = (obj.get("apiVersion"), obj.get("kind"))
        if key not in self.kinds:
            return ["no definition for apiVersion %r kind %r in the schema" % key]
        root = {"$ref": "#/$defs/" + self.kinds[key], "$defs": self.defs}
        validator = jsonschema.Draft202012Validator(root)
        out = []
        for e in sorted(validator.iter_errors(obj), key=lambda e: list(e.absolute_path)):
            where = ".".join(str(p) for p in e.absolute_path) or "(root)"
            # oneOf failures hide their reasons in the context.
            detail = "; ".join(sorted({c.message for c in e.context})) if e.context else ""
            out.append("%s: %s%s" % (where, e.message[:300], (" (" + detail[:300] + ")") if detail else ""))
        return out


def manifests(directory):
    out = []
    for path in sorted(glob.glob(os.path.join(directory, "*.yaml")) +
                       glob.glob(os.path.join(directory, "*.yml"))):
        with open(path) as f:
            for i, doc in enumerate(yaml.safe_load_all(f)):
                if doc is not None:
                    out.append(("%s#%d" % (os.path.relpath(path, SOURCE), i), doc))
    return out


def pods(binary):
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, CS_PODSPEC_DIR=tmp, QT_QPA_PLATFORM="offscreen")
        run = subprocess.run([binary, "writeForSchemaCheck"], env=env, capture_output=True,
                             text=True)
        if run.returncode != 0:
            sys.exit("%s writeForSchemaCheck failed:\n%s%s" % (binary, run.stdout, run.stderr))
        out = []
        for path in sorted(glob.glob(os.path.join(tmp, "*.json"))):
            with open(path) as f:
                out.append(("pod " + os.path.basename(path)[:-5], json.load(f)))
        return out


def broken(pod):
    """Objects the validator must refuse, each with what is wrong."""
    def edit(change):
        p = copy.deepcopy(pod)
        change(p)
        return p

    c = lambda p: p["spec"]["containers"][0]  # noqa: E731
    return [
        ("unknown field", edit(lambda p: c(p)["securityContext"].update(runAsNonroot=True))),
        ("unknown top-level field", edit(lambda p: p["spec"].update(hostNetworking=False))),
        ("wrong type", edit(lambda p: c(p)["securityContext"].update(runAsUser="1000"))),
        ("wrong type in a list", edit(lambda p: c(p).update(command="/bin/sh"))),
        ("missing required", edit(lambda p: c(p).pop("name"))),
        ("missing required in a volume", edit(lambda p: p["spec"]["volumes"][0].pop("name"))),
        ("bad quantity", edit(lambda p: c(p)["resources"]["limits"].update(memory="512 MB"))),
        ("bad sizeLimit", edit(lambda p: p["spec"]["volumes"][0]["emptyDir"].update(
            sizeLimit="lots"))),
        ("unknown kind", edit(lambda p: p.update(kind="Pods"))),
        ("label map of numbers", edit(lambda p: p["metadata"]["labels"].update(x=1))),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--podspec", required=True, help="the unit_podspec executable")
    parser.add_argument("--manifests", default=os.path.join(SOURCE, "packaging", "kubernetes"))
    parser.add_argument("--schema", default=os.path.join(HERE, "k8s-1.35-openapi-v3.json"))
    args = parser.parse_args()

    schema = Schema(args.schema)
    print("schema: Kubernetes %s, %d definitions" % (schema.source["kubernetes"],
                                                    len(schema.defs)))
    objects = pods(args.podspec)
    pod_count = len(objects)
    shipped = manifests(args.manifests)
    objects += shipped
    failed = 0

    # The validator first: it must refuse what the API server would refuse.
    if not objects:
        sys.exit("nothing to validate")
    for what, obj in broken(objects[0][1]):
        if not schema.errors(obj):
            print("FAIL validator accepted a pod with %s" % what)
            failed += 1
        else:
            print("ok   refused: %s (%s)" % (what, schema.errors(obj)[0][:120]))

    kinds = set()
    for name, obj in objects:
        errors = schema.errors(obj)
        kinds.add(obj.get("kind"))
        if errors:
            failed += 1
            print("FAIL %s" % name)
            for e in errors:
                print("       " + e)
        else:
            print("ok   %s (%s)" % (name, obj.get("kind")))

    expected_kinds = {"Pod", "Service", "Namespace", "ServiceAccount", "Role", "RoleBinding",
                      "NetworkPolicy"}
    if not expected_kinds <= kinds:
        print("FAIL kinds missing: %s" % sorted(expected_kinds - kinds))
        failed += 1
    if pod_count < 16:
        print("FAIL only %d pods were written" % pod_count)
        failed += 1
    print("%d pods and %d manifest objects checked, %d failures" % (pod_count, len(shipped),
                                                                    failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
