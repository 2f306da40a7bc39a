"""Builds the superstep Python package offline with Debian's setuptools:

    pip install --no-build-isolation ./python

The extension links superstep's static library, found either in a CMake build
tree (SUPERSTEP_BUILD_DIR=build/test-plain: libsuperstep.a and the generated
include/superstep/export.h there, headers from ../include) or installed
(`cmake --install`, found with pkg-config superstep). See docs/python.md.
"""

import glob
import os
import shlex
import subprocess

from setuptools import Extension, setup

here = os.path.dirname(os.path.abspath(__file__))
build_dir = os.environ.get("SUPERSTEP_BUILD_DIR")
include_dirs, extra_objects, libraries, library_dirs, cflags = [], [], [], [], []
if build_dir:
    build_dir = os.path.abspath(build_dir)
    include_dirs = [os.path.join(here, "..", "include"), os.path.join(build_dir, "include")]
    # With the server (python/src/serve.c: `python3 -m superstep serve`) and what it uses.
    extra_objects = [os.path.join(build_dir, f"lib{n}.a")
                     for n in ("superstep_server", "superstep_lua", "superstep_agent", "superstep")]
    libraries = ["microhttpd", "gvc", "cgraph", "lua5.4", "curl", "sqlite3", "pq", "pthread",
                 "m", "dl"]
else:
    def pkg(*args):
        # superstep-agent (the prebuilt agents: python/src/agent.c) requires superstep.
        return shlex.split(subprocess.check_output(["pkg-config", *args, "superstep-agent"],
                                                   text=True))

    # The installed libraries have no server: the module is built without `serve`.
    cflags.append("-DSSTPY_NO_SERVER")
    for flag in pkg("--cflags"):
        (include_dirs if flag.startswith("-I") else cflags).append(flag[2:] if flag.startswith("-I") else flag)
    for flag in pkg("--libs", "--static"):
        if flag.startswith("-L"):
            library_dirs.append(flag[2:])
        elif flag.startswith("-l"):
            libraries.append(flag[2:])

setup(
    name="superstep",
    version="0.1.0",
    description="LangGraph's Python API on superstep's C engine",
    packages=["superstep", "superstep.prebuilt"],
    ext_modules=[
        Extension(
            "superstep._core",
            sources=sorted(glob.glob(os.path.join("src", "*.c"))),
            include_dirs=include_dirs,
            extra_objects=extra_objects,
            libraries=libraries,
            library_dirs=library_dirs,
            extra_compile_args=["-std=c11"] + cflags,
        )
    ],
)
