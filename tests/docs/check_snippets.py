#!/usr/bin/env python3
"""Runs the Lua snippets of a Markdown document and checks what they print.

Usage: check_snippets.py SUPERSTEP_BINARY DOC.md

Each ```lua block whose first line is `-- NAME.lua` is a script. The ones with
`--> text` comments print those lines, in order: each is run with
`superstep graph NAME.lua` (which loads the script, so its top-level code runs,
and prints the returned graph's drawing, left out here) and its printed lines
must equal the comments, with 32-hex ids written as <id> (`"id":"..."`) or
<task id> (after a `:`). A snippet that prints nothing must load without an
error. Exit status 1 names every snippet that differs.
"""
import os
import re
import subprocess
import sys
import tempfile


def norm(line):
    line = re.sub(r':[0-9a-f]{32}', ':<task id>', line)
    line = re.sub(r'"id":"[0-9a-f]{32}"', '"id":"<id>"', line)
    return re.sub(r'\s+', ' ', line).strip()


def main():
    binary, doc = os.path.abspath(sys.argv[1]), sys.argv[2]
    text = open(doc, encoding='utf-8').read()
    blocks = re.findall(r'```lua\n(.*?)```', text, re.S)
    failures, checked = [], 0
    with tempfile.TemporaryDirectory() as work:
        os.symlink(os.path.join(os.path.dirname(os.path.abspath(doc)), '..', 'examples'),
                   os.path.join(work, 'examples'))
        for body in blocks:
            first = body.splitlines()[0]
            m = re.match(r'--\s*(\S+\.lua)\s*$', first)
            if not m:
                continue
            name = m.group(1)
            with open(os.path.join(work, name), 'w', encoding='utf-8') as f:
                f.write(body)
            want = [norm(l.split('-->', 1)[1]) for l in body.splitlines() if '-->' in l]
            p = subprocess.run([binary, 'graph', name], cwd=work, capture_output=True, text=True)
            got = [norm(l) for l in p.stdout.splitlines()
                   if not l.startswith(('%%', 'graph ', '    ', '\t'))]
            checked += 1
            if p.returncode != 0 or (want and got != want):
                failures.append(f'{name}: exit {p.returncode}\n  want {want}\n  got  {got}\n'
                                f'  stderr {p.stderr[-400:]}')
    for f in failures:
        print('FAIL', f)
    print(f'{doc}: {checked} snippets run, {len(failures)} differ')
    return 1 if failures or checked == 0 else 0


if __name__ == '__main__':
    sys.exit(main())
