/* The C twin of games/rng.py's Rng.shuffle, which stays the specification
 * (tests/games/test_rng.py compares the two, draw for draw and state for state).
 *
 * Every game begins with a shuffle. In Python each splitmix64 step is a dozen operations on
 * 64-bit integers, which Python keeps as multi-digit longs (one allocation each): shuffling
 * Mantis's 105 cards cost some 750,000 instructions, as much as four moves, and when many
 * games start together (a tournament round, the benchmark's rematches) the room loop spends
 * that on every one of them. Here each step is a few machine instructions.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

static const uint64_t GAMMA = 0x9E3779B97F4A7C15ULL;

/* One splitmix64 step: advances *state, returns the output (rng.py: Rng.next64). */
static uint64_t next64(uint64_t *state)
{
    uint64_t z = (*state += GAMMA);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* A uniform integer in [0, n), n >= 1, by rejection (rng.py: Rng.below). Python accepts a
 * draw below 2**64 - (2**64 % n); that bound is 2**64 itself, every draw, when n divides
 * 2**64. */
static uint64_t below(uint64_t *state, uint64_t n)
{
    uint64_t rem = (UINT64_MAX % n + 1) % n; /* 2**64 % n */
    for (;;) {
        uint64_t x = next64(state);
        if (rem == 0 || x <= UINT64_MAX - rem)
            return x % n;
    }
}

static PyObject *shuffle(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyLong_Check(args[0]) || !PyList_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "shuffle(state: int, items: list) -> int");
        return NULL;
    }
    uint64_t state = PyLong_AsUnsignedLongLong(args[0]);
    if (state == (uint64_t)-1 && PyErr_Occurred())
        return NULL;
    PyObject **items = ((PyListObject *)args[1])->ob_item;
    /* Nothing here runs Python code, so the list cannot change size under us. */
    for (Py_ssize_t i = PyList_GET_SIZE(args[1]) - 1; i > 0; i--) {
        Py_ssize_t j = (Py_ssize_t)below(&state, (uint64_t)i + 1);
        PyObject *swap = items[i];
        items[i] = items[j];
        items[j] = swap;
    }
    return PyLong_FromUnsignedLongLong(state);
}

static PyMethodDef methods[] = {
    {"shuffle", (PyCFunction)(void (*)(void))shuffle, METH_FASTCALL,
     "shuffle(state, items) -> int: Fisher-Yates over the list in place, drawing from "
     "splitmix64 at state; returns the state after."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_splitmix", "C twin of playhall.games.rng's shuffle.", -1, methods,
};

PyMODINIT_FUNC PyInit__splitmix(void)
{
    return PyModule_Create(&module_def);
}
