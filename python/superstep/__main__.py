"""`python3 -m superstep serve|worker ...`: superstep's server with Python graphs
(superstep.serve; docs/python.md, "Serving")."""

import sys

from .serve import main

USAGE = """usage: python3 -m superstep serve [CONFIG] [options]   (superstep serve's options)
       python3 -m superstep worker CONFIG --db postgresql://... [--workers N]"""

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in ("serve", "worker"):
        if len(sys.argv) >= 2 and sys.argv[1] in ("-h", "--help", "help"):
            print(USAGE)
            sys.exit(0)
        print(USAGE, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))
