#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Restates JSON-Schema-Test-Suite's draft 2020-12 cases as the data of tests/unit/test_json_schema.c.

Usage: port.py SUITE_CHECKOUT [OUT_DIR]

SUITE_CHECKOUT is a checkout of https://github.com/json-schema-org/JSON-Schema-Test-Suite
(a work tree, or a bare git directory). Every tests/draft2020-12/*.json file is copied
(optional/*.json as optional-*.json) with the groups that need a feature the validator
leaves out removed; the removed groups, and why, are written to EXCLUDED.md. The files
keep the suite's format: [{description, schema, tests: [{description, data, valid}]}].
"""
import json
import os
import subprocess
import sys

# Features we do not implement, found in a group's schema text.
FEATURES = [
    ('"$dynamicRef"', "uses $dynamicRef (dynamic scope resolution is not implemented)"),
    ('"unevaluatedProperties"', "uses unevaluatedProperties (not implemented)"),
    ('"unevaluatedItems"', "uses unevaluatedItems (not implemented)"),
    ("\\p{", "uses a Unicode property escape \\p{...} in a pattern (not implemented)"),
]
# Groups that need a schema from elsewhere (remote references, custom metaschemas).
REMOTE = {
    ("defs.json", "validate definition against metaschema"): "the 2020-12 metaschema",
    ("ref.json", "remote ref, containing refs itself"): "the 2020-12 metaschema",
    ("dynamicRef.json", "tests for implementation dynamic anchor and reference link"):
        "extendible-dynamic-ref.json from localhost:1234 (which uses $dynamicRef)",
    ("dynamicRef.json", "$ref and $dynamicAnchor are independent of order - $defs first"):
        "extendible-dynamic-ref.json from localhost:1234 (which uses $dynamicRef)",
    ("dynamicRef.json", "$ref and $dynamicAnchor are independent of order - $ref first"):
        "extendible-dynamic-ref.json from localhost:1234 (which uses $dynamicRef)",
    ("dynamicRef.json", "$ref to $dynamicRef finds detached $dynamicAnchor"):
        "detached-dynamicref.json from localhost:1234 (which uses $dynamicRef)",
    ("vocabulary.json", "schema that uses custom metaschema with with no validation vocabulary"):
        "a custom metaschema ($vocabulary)",
    ("optional/cross-draft.json", "refs to historic drafts are processed as historic drafts"):
        "a draft 2019-09 schema from localhost:1234",
}
# Whole files left out.
FILES = {
    "refRemote.json": "every group references schemas on http://localhost:1234 (remote $ref)",
    "optional/format-assertion.json": "format assertion (2020-12 makes 'format' an annotation; "
                                      "we do not assert it)",
}


def read(root, rel):
    if os.path.isdir(os.path.join(root, "tests")):
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            return f.read()
    return subprocess.check_output(["git", "--git-dir", root, "show", "HEAD:" + rel]).decode()


def listing(root, rel_dir):
    if os.path.isdir(os.path.join(root, "tests")):
        return sorted(os.listdir(os.path.join(root, rel_dir)))
    out = subprocess.check_output(["git", "--git-dir", root, "ls-tree", "--name-only", "HEAD",
                                   rel_dir + "/"]).decode()
    return sorted(os.path.basename(p) for p in out.split())


def plural(n, word):
    return "%d %s%s" % (n, word, "" if n == 1 else "s")


def reason(name, group):
    if name in FILES:
        return FILES[name]
    if (name, group["description"]) in REMOTE:
        return "needs " + REMOTE[(name, group["description"])]
    text = json.dumps(group["schema"])
    for needle, why in FEATURES:
        if needle in text:
            return why
    return None


def main():
    root = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(os.path.abspath(__file__))
    names = [n for n in listing(root, "tests/draft2020-12") if n.endswith(".json")]
    names += ["optional/" + n for n in listing(root, "tests/draft2020-12/optional")
              if n.endswith(".json")]
    kept_groups = kept_cases = left_groups = left_cases = 0
    lines = []
    for name in names:
        groups = json.loads(read(root, "tests/draft2020-12/" + name))
        keep, drop = [], []
        for g in groups:
            why = reason(name, g)
            (drop if why else keep).append((g, why))
        if drop:
            if not keep:
                lines.append("- `%s`: the whole file (%s): %s" %
                             (name, plural(len(drop), "group"), drop[0][1] if name in FILES else
                              "; ".join(sorted({w for _, w in drop}))))
            else:
                for g, why in drop:
                    lines.append("- `%s`, \"%s\" (%s): %s" %
                                 (name, g["description"], plural(len(g["tests"]), "case"), why))
        left_groups += len(drop)
        left_cases += sum(len(g["tests"]) for g, _ in drop)
        if not keep:
            continue
        target = os.path.join(out, name.replace("optional/", "optional-"))
        with open(target, "w", encoding="utf-8") as f:
            json.dump([g for g, _ in keep], f, indent=4, ensure_ascii=False)
            f.write("\n")
        kept_groups += len(keep)
        kept_cases += sum(len(g["tests"]) for g, _ in keep)
    with open(os.path.join(out, "EXCLUDED.md"), "w", encoding="utf-8") as f:
        f.write("<!-- Written by port.py; do not edit. -->\n# Left out of the suite\n\n")
        f.write("Kept: %d groups, %d cases. Left out: %d groups, %d cases:\n\n" %
                (kept_groups, kept_cases, left_groups, left_cases))
        f.write("\n".join(lines) + "\n")
        f.write("\nNot ported at all: `tests/draft2020-12/optional/format/` (format assertion).\n")
    print("kept %d groups, %d cases; left out %d groups, %d cases" %
          (kept_groups, kept_cases, left_groups, left_cases))


if __name__ == "__main__":
    main()
