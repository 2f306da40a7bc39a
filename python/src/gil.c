/* SPDX-License-Identifier: MIT */
/*
 * Taking the GIL on the engine's worker threads (sstpy_gil_ensure).
 *
 * PyGILState_Ensure on a thread Python does not know creates a PyThreadState
 * for the call and PyGILState_Release destroys it again (with its frame
 * stack, a fresh mmap'd chunk, and its threading.local dicts): a node called
 * on a worker paid that on every call. Here the first call on such a thread
 * keeps its thread state for the thread's life (one extra Ensure, the "pin",
 * never released by the calls), so the next calls only take and drop the
 * GIL. A thread-specific key's destructor deletes the state when the thread ends
 * (sst_engine_free joins the workers; the binding frees engines with the GIL
 * released so that the destructor can take it), unless the interpreter is
 * finalizing, which deletes every thread state itself.
 */
#include "core.h"

#include <pthread.h>

static pthread_key_t pin_key;
static pthread_once_t pin_once = PTHREAD_ONCE_INIT;
static bool pin_key_ok;
static _Thread_local bool pinned;

/* The thread's end: its thread state (the key's value; Python's own key for it may be
 * cleared already, as glibc clears every key before the destructors run) is deleted. */
static void unpin(void *ts) {
    if (_Py_IsFinalizing() || !Py_IsInitialized()) {
        return;
    }
    PyEval_RestoreThread(ts);
    PyThreadState_Clear(ts);
    PyThreadState_DeleteCurrent();
}

static void make_key(void) {
    pin_key_ok = pthread_key_create(&pin_key, unpin) == 0;
}

PyGILState_STATE sstpy_gil_ensure(void) {
    if (pinned) {
        return PyGILState_Ensure();
    }
    bool fresh = PyGILState_GetThisThreadState() == NULL;
    PyGILState_STATE s = PyGILState_Ensure();
    if (fresh) {
        pthread_once(&pin_once, make_key);
        if (pin_key_ok && pthread_setspecific(pin_key, PyThreadState_Get()) == 0) {
            (void)PyGILState_Ensure(); /* the pin: the state outlives the calls */
            pinned = true;
        }
    }
    return s;
}
