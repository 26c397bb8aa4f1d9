/* The hot loops of every move, in C: the diff between two views (diff.make_diff), packed
 * straight into msgpack bytes, and the packer that does it, on its own for every frame:
 *
 *   packed_diff(old, new, memo) == pack(diff.make_diff(old, new))
 *   pack(value)                 == msgpack.Packer(use_bin_type=True, strict_types=True,
 *                                                 default=codec._as_plain).pack(value)
 *
 * make_diff and msgpack's Packer are the specifications and are used wherever this module is
 * not built; the tests compare each pair on random values (tests/protocol/test_speedups.py).
 *
 * Why C: a move's broadcast diffs each viewer's view and packs the diff into its frame. In
 * Python (compiled or not) each op costs a list, a path list and a trip through msgpack's
 * generic packer; here the walk writes the op's bytes as it finds it, and nothing but the
 * result is allocated. No library does this: JSON-patch libraries diff but neither pack nor
 * share work across viewers.
 *
 * The walk decides "same or not" as make_diff does (equal, and of the same msgpack types all
 * the way down) but cheaper: values that are the very same object are skipped, and element
 * types are compared instead of encodings. The memo (one dict per broadcast) lets a subtree
 * pair that several viewers' views share by identity, at the same path, be walked once.
 *
 * The packer handles the exact types views are made of (None, bool, int, float, str, bytes,
 * bytearray, dict, list, tuple). Anything else (an enum, a subclass, a memoryview) is handed
 * to the fallback, msgpack's own packer (set_fallback), and its bytes spliced in; its nesting
 * limit then starts afresh inside that value.
 *
 * Views are plain data that nobody changes once built (the server's rule): the walks hold
 * borrowed references while they compare. The module keeps one output buffer and one path
 * stack for reuse (a reentrant call gets fresh ones): it is single-phase initialised and relies
 * on the GIL, so it is not for free-threaded builds or subinterpreters.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

/* msgpack's DEFAULT_RECURSE_LIMIT (511 before msgpack 1.1, 1024 since; set_fallback is told
 * the installed one): a value nested deeper is refused with ValueError. */
static int nest_limit = 1024;
/* make_diff's SMALL_MAP: a changed map of at most this many keys, most of them changed, is
 * sent whole. */
#define SMALL_MAP 8
/* Where a diff's values sit in an update frame: frame map, "diff" array, op, value. */
#define VALUE_DEPTH 3

/* -- an output buffer ------------------------------------------------------------------- */

typedef struct {
    char *data;
    Py_ssize_t len;
    Py_ssize_t cap;
} Buf;

static int buf_grow(Buf *b, Py_ssize_t need)
{
    Py_ssize_t cap = b->cap ? b->cap : 512;
    while (cap < b->len + need) {
        if (cap > PY_SSIZE_T_MAX / 2) {
            PyErr_NoMemory();
            return -1;
        }
        cap *= 2;
    }
    char *data = PyMem_Realloc(b->data, (size_t)cap);
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->data = data;
    b->cap = cap;
    return 0;
}

static inline int reserve(Buf *b, Py_ssize_t n)
{
    return b->len + n <= b->cap ? 0 : buf_grow(b, n);
}

static inline int put(Buf *b, const void *src, Py_ssize_t n)
{
    if (reserve(b, n) < 0)
        return -1;
    memcpy(b->data + b->len, src, (size_t)n);
    b->len += n;
    return 0;
}

static inline void be16(char *p, uint16_t v)
{
    p[0] = (char)(v >> 8);
    p[1] = (char)v;
}

static inline void be32(char *p, uint32_t v)
{
    p[0] = (char)(v >> 24);
    p[1] = (char)(v >> 16);
    p[2] = (char)(v >> 8);
    p[3] = (char)v;
}

static inline void be64(char *p, uint64_t v)
{
    be32(p, (uint32_t)(v >> 32));
    be32(p + 4, (uint32_t)v);
}

/* One type byte, then `size` big-endian bytes of `value` (size 0, 1, 2, 4 or 8). */
static inline int put_head(Buf *b, unsigned char type, int size, uint64_t value)
{
    if (reserve(b, 9) < 0)
        return -1;
    char *p = b->data + b->len;
    p[0] = (char)type;
    switch (size) {
    case 1: p[1] = (char)value; break;
    case 2: be16(p + 1, (uint16_t)value); break;
    case 4: be32(p + 1, (uint32_t)value); break;
    case 8: be64(p + 1, value); break;
    }
    b->len += 1 + size;
    return 0;
}

/* A reusable buffer: most calls pack a few hundred bytes, and a fresh one each time would cost
 * an allocation. Reentrant calls (a fallback that packs) get a buffer of their own. */
static Buf shared_buf;
static int shared_busy;

static Buf *take_buf(Buf *own)
{
    if (shared_busy) {
        own->data = NULL;
        own->len = own->cap = 0;
        return own;
    }
    shared_busy = 1;
    shared_buf.len = 0;
    return &shared_buf;
}

static void give_buf(Buf *b)
{
    if (b == &shared_buf) {
        shared_busy = 0;
        if (b->cap > (1 << 20)) { /* let one huge value's memory go */
            PyMem_Free(b->data);
            b->data = NULL;
            b->cap = 0;
        }
    }
    else {
        PyMem_Free(b->data);
    }
}

/* -- msgpack headers (the format's rules, as msgpack-python applies them) ----------------- */

/* An array's or a map's header: `fix` is its one-byte form's type (0x90, 0x80), `wide` the
 * 16-bit one's (0xdc, 0xde; the 32-bit one's follows it). */
static int pack_container_header(Buf *b, Py_ssize_t n, unsigned char fix, unsigned char wide)
{
    if (n < 16)
        return put_head(b, (unsigned char)(fix | n), 0, 0);
    if (n < 0x10000)
        return put_head(b, wide, 2, (uint64_t)n);
    if ((uint64_t)n <= 0xffffffffu)
        return put_head(b, (unsigned char)(wide + 1), 4, (uint64_t)n);
    PyErr_SetString(PyExc_ValueError, fix == 0x90 ? "list is too large" : "dict is too large");
    return -1;
}

static inline int pack_array_header(Buf *b, Py_ssize_t n)
{
    return pack_container_header(b, n, 0x90, 0xdc);
}

static inline int pack_map_header(Buf *b, Py_ssize_t n)
{
    return pack_container_header(b, n, 0x80, 0xde);
}

static int pack_raw(Buf *b, const char *data, Py_ssize_t n, int bin)
{
    int r;
    if ((uint64_t)n > 0xffffffffu) {
        PyErr_SetString(PyExc_ValueError, bin ? "bytes object is too large"
                                              : "unicode string is too large");
        return -1;
    }
    if (bin)
        r = n < 0x100 ? put_head(b, 0xc4, 1, (uint64_t)n)
          : n < 0x10000 ? put_head(b, 0xc5, 2, (uint64_t)n)
          : put_head(b, 0xc6, 4, (uint64_t)n);
    else
        r = n < 32 ? put_head(b, (unsigned char)(0xa0 | n), 0, 0)
          : n < 0x100 ? put_head(b, 0xd9, 1, (uint64_t)n)
          : n < 0x10000 ? put_head(b, 0xda, 2, (uint64_t)n)
          : put_head(b, 0xdb, 4, (uint64_t)n);
    return r < 0 ? -1 : put(b, data, n);
}

static int pack_str(Buf *b, PyObject *s)
{
    Py_ssize_t n;
    const char *data;
    if (PyUnicode_IS_COMPACT_ASCII(s)) {
        data = (const char *)PyUnicode_DATA(s);
        n = PyUnicode_GET_LENGTH(s);
    }
    else if ((data = PyUnicode_AsUTF8AndSize(s, &n)) == NULL) {
        return -1;
    }
    return pack_raw(b, data, n, 0);
}

/* The smallest encoding of an int, as msgpack's pack_template does it. */
static int pack_unsigned(Buf *b, unsigned long long u)
{
    if (u < 0x80)
        return put_head(b, (unsigned char)u, 0, 0);
    if (u < 0x100)
        return put_head(b, 0xcc, 1, u);
    if (u < 0x10000)
        return put_head(b, 0xcd, 2, u);
    if (u < 0x100000000ull)
        return put_head(b, 0xce, 4, u);
    return put_head(b, 0xcf, 8, u);
}

static int pack_signed(Buf *b, long long d)
{
    if (d >= 0)
        return pack_unsigned(b, (unsigned long long)d);
    if (d >= -32)
        return put_head(b, (unsigned char)(int8_t)d, 0, 0);
    if (d >= -0x80)
        return put_head(b, 0xd0, 1, (uint64_t)d);
    if (d >= -0x8000)
        return put_head(b, 0xd1, 2, (uint64_t)d);
    if (d >= -0x80000000ll)
        return put_head(b, 0xd2, 4, (uint64_t)d);
    return put_head(b, 0xd3, 8, (uint64_t)d);
}

static int pack_int(Buf *b, PyObject *o)
{
    int overflow;
    long long d = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow == 0) {
        if (d == -1 && PyErr_Occurred())
            return -1;
        return pack_signed(b, d);
    }
    if (overflow > 0) {
        unsigned long long u = PyLong_AsUnsignedLongLong(o);
        if (!(u == (unsigned long long)-1 && PyErr_Occurred()))
            return pack_unsigned(b, u);
        PyErr_Clear();
    }
    PyErr_SetString(PyExc_OverflowError, "Integer value out of range");
    return -1;
}

static int pack_float(Buf *b, double x)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    return put_head(b, 0xcb, 8, bits);
}

/* -- values ------------------------------------------------------------------------------ */

static PyObject *fallback; /* msgpack's packer, for every type not handled here */

static int pack_value(Buf *b, PyObject *o, int limit);

static int pack_other(Buf *b, PyObject *o)
{
    if (fallback == NULL) {
        PyErr_Format(PyExc_TypeError, "can not serialize %.200s object", Py_TYPE(o)->tp_name);
        return -1;
    }
    PyObject *packed = PyObject_CallOneArg(fallback, o);
    if (packed == NULL)
        return -1;
    int r;
    if (PyBytes_Check(packed)) {
        r = put(b, PyBytes_AS_STRING(packed), PyBytes_GET_SIZE(packed));
    }
    else {
        PyErr_SetString(PyExc_TypeError, "the fallback packer must return bytes");
        r = -1;
    }
    Py_DECREF(packed);
    return r;
}

static int pack_items(Buf *b, PyObject *const *items, Py_ssize_t n, int limit)
{
    if (pack_array_header(b, n) < 0)
        return -1;
    for (Py_ssize_t i = 0; i < n; i++)
        if (pack_value(b, items[i], limit) < 0)
            return -1;
    return 0;
}

/* `limit`: how much deeper values may nest (msgpack's nest_limit). */
static int pack_value(Buf *b, PyObject *o, int limit)
{
    if (limit < 0) {
        PyErr_SetString(PyExc_ValueError, "recursion limit exceeded.");
        return -1;
    }
    PyTypeObject *type = Py_TYPE(o);
    if (type == &PyUnicode_Type)
        return pack_str(b, o);
    if (type == &PyLong_Type)
        return pack_int(b, o);
    if (o == Py_None)
        return put_head(b, 0xc0, 0, 0);
    if (o == Py_True)
        return put_head(b, 0xc3, 0, 0);
    if (o == Py_False)
        return put_head(b, 0xc2, 0, 0);
    if (type == &PyDict_Type) {
        if (pack_map_header(b, PyDict_GET_SIZE(o)) < 0)
            return -1;
        Py_ssize_t pos = 0;
        PyObject *key, *value;
        while (PyDict_Next(o, &pos, &key, &value))
            if (pack_value(b, key, limit - 1) < 0 || pack_value(b, value, limit - 1) < 0)
                return -1;
        return 0;
    }
    if (type == &PyList_Type)
        return pack_items(b, ((PyListObject *)o)->ob_item, PyList_GET_SIZE(o), limit - 1);
    if (type == &PyTuple_Type) /* strict_types sends it to default, which makes it a list */
        return pack_items(b, ((PyTupleObject *)o)->ob_item, PyTuple_GET_SIZE(o), limit - 1);
    if (type == &PyFloat_Type)
        return pack_float(b, PyFloat_AS_DOUBLE(o));
    if (type == &PyBytes_Type)
        return pack_raw(b, PyBytes_AS_STRING(o), PyBytes_GET_SIZE(o), 1);
    if (type == &PyByteArray_Type)
        return pack_raw(b, PyByteArray_AS_STRING(o), PyByteArray_GET_SIZE(o), 1);
    return pack_other(b, o);
}

/* The packer on its own, for every frame and stored record: msgpack's Packer takes about twice
 * the instructions for the same bytes (its per-call set-up, and a type test per value). */
static PyObject *speedups_pack(PyObject *module, PyObject *value)
{
    Buf own;
    Buf *b = take_buf(&own);
    PyObject *result = NULL;
    if (pack_value(b, value, nest_limit) == 0)
        result = PyBytes_FromStringAndSize(b->data, b->len);
    give_buf(b);
    return result;
}

/* -- the diff ---------------------------------------------------------------------------- */

/* One step of a path: a map key, or (key NULL) an array index. */
typedef struct {
    PyObject *key;
    Py_ssize_t index;
} Step;

#define MAX_DEPTH 1000

typedef struct {
    Buf *out;
    Py_ssize_t ops;    /* ops written to out so far */
    Step path[MAX_DEPTH];
    int depth;
    PyObject *memo;    /* a dict, or NULL */
    Buf scratch;       /* a path packed on its own, for the memo */
} Differ;

static int push_key(Differ *d, PyObject *key)
{
    if (d->depth >= MAX_DEPTH) {
        PyErr_SetString(PyExc_RecursionError, "view nested too deeply to diff");
        return -1;
    }
    d->path[d->depth].key = key;
    d->depth++;
    return 0;
}

static int push_index(Differ *d, Py_ssize_t index)
{
    if (d->depth >= MAX_DEPTH) {
        PyErr_SetString(PyExc_RecursionError, "view nested too deeply to diff");
        return -1;
    }
    d->path[d->depth].key = NULL;
    d->path[d->depth].index = index;
    d->depth++;
    return 0;
}

static int pack_steps(Buf *b, const Step *path, int depth)
{
    for (int i = 0; i < depth; i++) {
        int r = path[i].key != NULL ? pack_value(b, path[i].key, nest_limit)
                                    : pack_signed(b, path[i].index);
        if (r < 0)
            return -1;
    }
    return 0;
}

/* ["set", path, value], ["del", path] or ["len", path, n]: the op's head and its path. */
static int op_head(Differ *d, const char *name, int fields)
{
    char head[5] = {(char)(0x90 | fields), (char)0xa3, name[0], name[1], name[2]};
    d->ops++;
    if (put(d->out, head, 5) < 0 || pack_array_header(d->out, d->depth) < 0)
        return -1;
    return pack_steps(d->out, d->path, d->depth);
}

static int op_set(Differ *d, PyObject *value)
{
    if (op_head(d, "set", 3) < 0)
        return -1;
    return pack_value(d->out, value, nest_limit - VALUE_DEPTH);
}

static int op_set_key(Differ *d, PyObject *key, PyObject *value)
{
    if (push_key(d, key) < 0)
        return -1;
    int r = op_set(d, value);
    d->depth--;
    return r;
}

static int op_set_index(Differ *d, Py_ssize_t index, PyObject *value)
{
    if (push_index(d, index) < 0)
        return -1;
    int r = op_set(d, value);
    d->depth--;
    return r;
}

static inline int is_container(PyObject *o)
{
    return PyDict_Check(o) || PyList_Check(o);
}

/* For a == b of one type: whether every value inside has the same type on both sides too
 * (msgpack tells True from 1 and 1 from 1.0; Python's == does not). 1, 0, or -1 on error. */
static int exact(PyObject *a, PyObject *b)
{
    int r = 1;
    if (Py_EnterRecursiveCall(" while comparing views"))
        return -1;
    if (PyDict_Check(a)) {
        Py_ssize_t pos = 0;
        PyObject *key, *x;
        while (r == 1 && PyDict_Next(a, &pos, &key, &x)) {
            PyObject *y = PyDict_GetItemWithError(b, key);
            if (y == NULL)
                r = PyErr_Occurred() ? -1 : 0;
            else if (Py_TYPE(x) != Py_TYPE(y))
                r = 0;
            else if (x != y && is_container(x))
                r = exact(x, y);
        }
    }
    else {
        Py_ssize_t n = PyList_GET_SIZE(a);
        if (n != PyList_GET_SIZE(b))
            r = 0;
        for (Py_ssize_t i = 0; r == 1 && i < n; i++) {
            PyObject *x = PyList_GET_ITEM(a, i), *y = PyList_GET_ITEM(b, i);
            if (Py_TYPE(x) != Py_TYPE(y))
                r = 0;
            else if (x != y && is_container(x))
                r = exact(x, y);
        }
    }
    Py_LeaveRecursiveCall();
    return r;
}

/* Whether two values differ on the wire: 1, 0, or -1 on error (not make_diff's _same). */
static int differ(PyObject *a, PyObject *b)
{
    if (a == b)
        return 0;
    if (Py_TYPE(a) != Py_TYPE(b))
        return 1;
    int ne = PyObject_RichCompareBool(a, b, Py_NE);
    if (ne != 0)
        return ne;
    if (is_container(a)) {
        int same = exact(a, b);
        return same < 0 ? -1 : !same;
    }
    return 0;
}

static int diff_maps(Differ *d, PyObject *old, PyObject *new, int memo);
static int diff_arrays(Differ *d, PyObject *old, PyObject *new);

/* Two values known to differ, at the current path. */
static int diff_any(Differ *d, PyObject *old, PyObject *new)
{
    if (PyDict_Check(old) && PyDict_Check(new))
        return diff_maps(d, old, new, 0);
    if (PyList_Check(old) && PyList_Check(new) && PyList_GET_SIZE(old) && PyList_GET_SIZE(new))
        return diff_arrays(d, old, new);
    return op_set(d, new);
}

/* Two maps or non-empty arrays at the current path, from the memo if
 * another view's diff worked them out at this same path. An entry holds both objects (so their
 * addresses are not reused while it lives), the path, the ops' bytes and how many ops. */
static int recalled(Differ *d, PyObject *old, PyObject *new)
{
    uint64_t id = (uint64_t)(uintptr_t)old * 0x9E3779B97F4A7C15ull ^ (uint64_t)(uintptr_t)new;
    PyObject *key = PyLong_FromUnsignedLongLong(id);
    if (key == NULL)
        return -1;
    d->scratch.len = 0;
    if (pack_steps(&d->scratch, d->path, d->depth) < 0)
        goto fail;
    PyObject *hit = PyDict_GetItemWithError(d->memo, key);
    if (hit == NULL && PyErr_Occurred())
        goto fail;
    if (hit != NULL && PyTuple_GET_ITEM(hit, 0) == old && PyTuple_GET_ITEM(hit, 1) == new) {
        PyObject *path = PyTuple_GET_ITEM(hit, 2);
        if (PyBytes_GET_SIZE(path) == d->scratch.len &&
            memcmp(PyBytes_AS_STRING(path), d->scratch.data, (size_t)d->scratch.len) == 0) {
            PyObject *ops = PyTuple_GET_ITEM(hit, 3);
            Py_DECREF(key);
            d->ops += PyLong_AsSsize_t(PyTuple_GET_ITEM(hit, 4));
            return put(d->out, PyBytes_AS_STRING(ops), PyBytes_GET_SIZE(ops));
        }
    }
    Py_ssize_t start = d->out->len, ops = d->ops;
    PyObject *path = PyBytes_FromStringAndSize(d->scratch.data, d->scratch.len);
    if (path == NULL)
        goto fail;
    int r = PyDict_CheckExact(new) ? diff_maps(d, old, new, 1) : diff_arrays(d, old, new);
    PyObject *entry = r == 0 ? PyTuple_New(5) : NULL;
    if (entry == NULL) {
        Py_DECREF(path);
        goto fail;
    }
    Py_INCREF(old);
    Py_INCREF(new);
    PyTuple_SET_ITEM(entry, 0, old);
    PyTuple_SET_ITEM(entry, 1, new);
    PyTuple_SET_ITEM(entry, 2, path);
    PyObject *bytes = PyBytes_FromStringAndSize(d->out->data + start, d->out->len - start);
    PyObject *count = PyLong_FromSsize_t(d->ops - ops);
    if (bytes == NULL || count == NULL) {
        Py_XDECREF(bytes);
        Py_XDECREF(count);
        Py_DECREF(entry);
        goto fail;
    }
    PyTuple_SET_ITEM(entry, 3, bytes);
    PyTuple_SET_ITEM(entry, 4, count);
    if (PyDict_SetItem(d->memo, key, entry) < 0) {
        Py_DECREF(entry);
        goto fail;
    }
    Py_DECREF(entry);
    Py_DECREF(key);
    return 0;
fail:
    Py_DECREF(key);
    return -1;
}

/* Two maps (maybe the same) at the current path. */
static int diff_maps(Differ *d, PyObject *old, PyObject *new, int memo)
{
    Py_ssize_t added = 0, changed = 0, start = d->out->len, start_ops = d->ops;
    Py_ssize_t size = PyDict_GET_SIZE(new), pos = 0, old_pos = 0;
    PyObject *key, *value, *old_key, *old_value;
    int r = 0, in_step = 1;
    if (Py_EnterRecursiveCall(" while diffing views"))
        return -1;
    while (PyDict_Next(new, &pos, &key, &value)) {
        /* Two views built by the same code have their keys in the same order, and the very
         * same key objects (literals, or interned): walking old alongside finds each key's old
         * value without hashing. Where the orders part, it is looked up. */
        PyObject *was;
        if (in_step && (in_step = PyDict_Next(old, &old_pos, &old_key, &old_value)) &&
            old_key == key) {
            was = old_value;
        }
        else {
            was = PyDict_GetItemWithError(old, key);
            if (was == NULL && PyErr_Occurred())
                goto fail;
        }
        if (was == value)
            continue;
        PyTypeObject *kind = Py_TYPE(value);
        if (was == NULL || kind != Py_TYPE(was)) {
            added += was == NULL;
            r = op_set_key(d, key, value);
        }
        else if (kind == &PyDict_Type ||
                 (kind == &PyList_Type && PyList_GET_SIZE(was) && PyList_GET_SIZE(value))) {
            Py_ssize_t before = d->ops;
            if (push_key(d, key) < 0)
                goto fail;
            r = memo && d->memo != NULL ? recalled(d, was, value)
              : kind == &PyDict_Type ? diff_maps(d, was, value, 0)
              : diff_arrays(d, was, value);
            d->depth--;
            if (r == 0 && d->ops == before)
                continue;
        }
        else if (kind == &PyList_Type) {
            if (!PyList_GET_SIZE(was) && !PyList_GET_SIZE(value))
                continue;
            r = op_set_key(d, key, value);
        }
        else {
            int ne = PyObject_RichCompareBool(was, value, Py_NE);
            if (ne < 0)
                goto fail;
            if (ne) {
                r = op_set_key(d, key, value);
            }
            else if (is_container(value)) {
                int same = exact(was, value);
                if (same < 0)
                    goto fail;
                if (same)
                    continue;
                if (push_key(d, key) < 0)
                    goto fail;
                r = diff_any(d, was, value);
                d->depth--;
            }
            else {
                continue;
            }
        }
        if (r < 0)
            goto fail;
        changed++;
    }
    /* Each key of new that old has is one of old's keys: if old has more, the rest are gone. */
    if (PyDict_GET_SIZE(old) > size - added) {
        pos = 0;
        while (PyDict_Next(old, &pos, &key, &value)) {
            int has = PyDict_Contains(new, key);
            if (has < 0)
                goto fail;
            if (has)
                continue;
            if (push_key(d, key) < 0)
                goto fail;
            r = op_head(d, "del", 2);
            d->depth--;
            if (r < 0)
                goto fail;
            changed++;
        }
    }
    if (changed * 2 > size && size <= SMALL_MAP && d->depth > 0) {
        d->out->len = start;
        d->ops = start_ops;
        r = op_set(d, new);
    }
    Py_LeaveRecursiveCall();
    return r;
fail:
    Py_LeaveRecursiveCall();
    return -1;
}

static int both_nested(PyObject *a, PyObject *b)
{
    return (PyDict_Check(a) && PyDict_Check(b)) || (PyList_Check(a) && PyList_Check(b));
}

/* Two non-empty arrays (maybe the same) at the current path. */
static int diff_arrays(Differ *d, PyObject *old, PyObject *new)
{
    Py_ssize_t n = PyList_GET_SIZE(old), m = PyList_GET_SIZE(new);
    Py_ssize_t common = n < m ? n : m;
    Py_ssize_t small[32], *changed = small, count = 0;
    int nested = 1, r = 0;
    if (Py_EnterRecursiveCall(" while diffing views"))
        return -1;
    if (common > 32 && (changed = PyMem_Malloc((size_t)common * sizeof *changed)) == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    for (Py_ssize_t i = 0; i < common; i++) {
        PyObject *a = PyList_GET_ITEM(old, i), *b = PyList_GET_ITEM(new, i);
        int differs = differ(a, b);
        if (differs < 0)
            goto fail;
        if (differs) {
            changed[count++] = i;
            if (nested && !both_nested(a, b))
                nested = 0;
        }
    }
    /* A short array whose elements mostly changed is cheaper sent whole, unless they are maps
     * or arrays themselves, whose own diffs are usually far smaller. */
    if (common <= 8 && count * 2 > common && !nested) {
        r = op_set(d, new);
        goto done;
    }
    for (Py_ssize_t j = 0; j < count; j++) {
        Py_ssize_t i = changed[j];
        PyObject *a = PyList_GET_ITEM(old, i), *b = PyList_GET_ITEM(new, i);
        PyTypeObject *kind = Py_TYPE(b);
        if (push_index(d, i) < 0)
            goto fail;
        if (kind == Py_TYPE(a) && kind == &PyDict_Type)
            r = diff_maps(d, a, b, 0);
        else if (kind == Py_TYPE(a) && kind == &PyList_Type)
            r = PyList_GET_SIZE(a) && PyList_GET_SIZE(b) ? diff_arrays(d, a, b) : op_set(d, b);
        else if (is_container(a) && is_container(b))
            r = diff_any(d, a, b);
        else
            r = op_set(d, b);
        d->depth--;
        if (r < 0)
            goto fail;
    }
    for (Py_ssize_t i = common; i < m; i++)
        if (op_set_index(d, i, PyList_GET_ITEM(new, i)) < 0)
            goto fail;
    if (m < n && (op_head(d, "len", 3) < 0 || pack_signed(d->out, m) < 0))
        goto fail;
done:
    if (changed != small)
        PyMem_Free(changed);
    Py_LeaveRecursiveCall();
    return r;
fail:
    if (changed != small)
        PyMem_Free(changed);
    Py_LeaveRecursiveCall();
    return -1;
}

/* Like the buffer: one Differ reused (its path has room for MAX_DEPTH steps), a fresh one for
 * a reentrant call. */
static Differ shared_differ;
static int differ_busy;

static Differ *take_differ(void)
{
    if (!differ_busy) {
        differ_busy = 1;
        return &shared_differ;
    }
    Differ *d = PyMem_Malloc(sizeof *d);
    if (d == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    d->scratch.data = NULL;
    d->scratch.len = d->scratch.cap = 0;
    return d;
}

static void give_differ(Differ *d)
{
    if (d == &shared_differ) {
        differ_busy = 0;
        return;
    }
    PyMem_Free(d->scratch.data);
    PyMem_Free(d);
}

/* The diff's array header goes before its ops, whose count is known only at the end: the ops
 * are written after room for the largest header, which is then put right before them. */
#define DIFF_HEAD_ROOM 5

static PyObject *speedups_packed_diff(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 2 || nargs > 3) {
        PyErr_SetString(PyExc_TypeError, "packed_diff(old, new, memo=None)");
        return NULL;
    }
    PyObject *old = args[0], *new = args[1];
    PyObject *memo = nargs == 3 && args[2] != Py_None ? args[2] : NULL;
    if (memo != NULL && !PyDict_CheckExact(memo)) {
        PyErr_SetString(PyExc_TypeError, "memo must be a dict");
        return NULL;
    }
    Buf own;
    Differ *d = take_differ();
    if (d == NULL)
        return NULL;
    d->out = take_buf(&own);
    d->ops = 0;
    d->depth = 0;
    d->memo = memo;
    PyObject *result = NULL;
    int r = reserve(d->out, DIFF_HEAD_ROOM);
    if (r == 0) {
        d->out->len = DIFF_HEAD_ROOM;
        if (PyDict_CheckExact(old) && PyDict_CheckExact(new)) {
            r = diff_maps(d, old, new, 1);
        }
        else {
            r = differ(old, new);
            if (r > 0)
                r = diff_any(d, old, new);
        }
    }
    if (r == 0) {
        Buf head = {NULL, 0, 0};
        if (pack_array_header(&head, d->ops) == 0) {
            char *start = d->out->data + DIFF_HEAD_ROOM - head.len;
            memcpy(start, head.data, (size_t)head.len);
            result = PyBytes_FromStringAndSize(start, d->out->len - (start - d->out->data));
        }
        PyMem_Free(head.data);
    }
    give_buf(d->out);
    give_differ(d);
    return result;
}

/* -- the fallback packer ---------------------------------------------------------------- */

static PyObject *speedups_set_fallback(PyObject *module, PyObject *args)
{
    PyObject *packer;
    int limit;
    if (!PyArg_ParseTuple(args, "Oi:set_fallback", &packer, &limit))
        return NULL;
    if (!PyCallable_Check(packer)) {
        PyErr_SetString(PyExc_TypeError, "the fallback packer must be callable");
        return NULL;
    }
    Py_INCREF(packer);
    Py_XSETREF(fallback, packer);
    nest_limit = limit;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"pack", speedups_pack, METH_O,
     "pack(value) -> bytes: value as msgpack, as codec's packer makes it."},
    {"packed_diff", (PyCFunction)(void (*)(void))speedups_packed_diff, METH_FASTCALL,
     "packed_diff(old, new, memo=None) -> bytes: pack(make_diff(old, new)), in one pass.\n\n"
     "memo: a dict shared by the diffs of one version's views (see diff.packed_diff); only\n"
     "this"
     "function may read or write it."},
    {"set_fallback", speedups_set_fallback, METH_VARARGS,
     "set_fallback(packer, nest_limit): packer(value) -> bytes packs what this module does not\n"
     "handle; nest_limit is the packer's own limit on nesting."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "playhall_protocol._speedups",
    "codec.pack, and pack(make_diff(...)) in one pass; see _speedups.c.",
    -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__speedups(void)
{
    return PyModule_Create(&module_def);
}
