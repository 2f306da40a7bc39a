/* SPDX-License-Identifier: MIT */
/* superstep._core.Server: `superstep serve` inside the interpreter (python/src/serve.c). */
#ifndef SUPERSTEP_PYTHON_SERVE_H
#define SUPERSTEP_PYTHON_SERVE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* Adds the Server type to the module; -1 with an exception set. */
int sstpy_serve_init(PyObject *m);

#endif /* SUPERSTEP_PYTHON_SERVE_H */
