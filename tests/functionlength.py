#!/usr/bin/env python3
"""Fails when a function of the product code is longer than the limit (80 lines by default).

    functionlength.py [--limit N] [--list N] ROOT

A function is counted from its opening brace to its closing brace, both included. The product
code is formatted by clang-format (tests/formatcheck.cmake), whose style puts the brace of every
function body on a line of its own at the function's indentation, so a body is a line holding
only "{" right after a signature, up to the next line holding only "}" at the same
indentation; lambdas and local classes count towards the function they are in. Headers are
checked too (bodies written inside a class). Run by ctest as function_length (label style),
beside format_check, so that a long function cannot come back unnoticed.
"""
import argparse
import pathlib
import re
import sys

# The product code: what ships (tests and benchmarks may be longer).
DIRS = ("app", "core", "ui", "gateway")
# A line before "{" that opens a type or a namespace, not a function.
NOT_FUNCTION = re.compile(r"^\s*(class|struct|union|enum|namespace|extern)\b|^\s*(template\s*<.*>\s*)?(class|struct)\b")


def signature_before(lines, i):
    """The signature that ends right above line i (a body's "{"), or None for a type or a
    namespace: the lines back to the previous blank line, comment or statement end."""
    parts = []
    j = i - 1
    while j >= 0:
        text = lines[j].strip()
        if not text or text.startswith("//") or text.endswith((";", "}", "{")) or text.startswith("#"):
            break
        parts.insert(0, text)
        j -= 1
    sig = " ".join(parts)
    if not sig or NOT_FUNCTION.search(sig) or "(" not in sig:
        return None
    return sig


def functions(path):
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    i = 0
    while i < len(lines):
        m = re.fullmatch(r"(\s*)\{", lines[i])
        sig = signature_before(lines, i) if m else None
        if sig is None:
            i += 1
            continue
        closing = m.group(1) + "}"
        end = next((k for k in range(i + 1, len(lines)) if lines[k] == closing or lines[k] == closing + ";"), None)
        if end is None:
            i += 1
            continue
        name = sig.split("(")[0].split()[-1] if sig.split("(")[0].split() else sig[:40]
        yield name, i + 1, end - i + 1
        i = end + 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limit", type=int, default=80)
    ap.add_argument("--list", type=int, default=0, metavar="N", help="also print the N longest")
    ap.add_argument("root")
    args = ap.parse_args()
    root = pathlib.Path(args.root)
    found = []
    for d in DIRS:
        for path in sorted((root / d).rglob("*")):
            if path.suffix in (".cpp", ".h") and path.is_file():
                for name, line, length in functions(path):
                    found.append((length, f"{path.relative_to(root)}:{line}", name))
    found.sort(reverse=True)
    for length, where, name in found[: args.list]:
        print(f"{length:5} {where} {name}")
    over = [f for f in found if f[0] > args.limit]
    if not found:
        print("functionlength: no function found (wrong root?)", file=sys.stderr)
        return 2
    if over:
        print(f"functionlength: {len(over)} function(s) over {args.limit} lines (split them):", file=sys.stderr)
        for length, where, name in over:
            print(f"  {where} {name}: {length} lines", file=sys.stderr)
        return 1
    print(f"functionlength: {len(found)} functions, none over {args.limit} lines (longest {found[0][0]}: {found[0][2]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
