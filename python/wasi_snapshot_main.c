/* Snapshot entry points linked into python.wasm by scripts/build-python-wasi (docs/python.md,
 * "Snapshots"): `wizer.initialize` initialises CPython once; `wizer.resume` runs one job from an
 * image of that state. `_start` (CPython's own main) stays the cold path, unchanged.
 *
 * This file deliberately never names __wasm_call_ctors: wasm-ld then wraps each export in "run
 * constructors ... run destructors", so every `wizer.resume` re-runs wasi-libc's constructors,
 * which re-read this job's environment, register this job's preopens (newest entry wins) and
 * restart the emulated process clock. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wasi/api.h>

extern char **environ;

/* Imported during initialisation, so jobs find them in sys.modules: the common standard library
 * of short tool calls. Nothing that draws per-process randomness or time at import, except
 * `random`, which every resume reseeds (tempfile, uuid, secrets and logging are left out). */
static const char *const preimported[] = {
    "abc", "argparse", "base64", "bisect", "collections", "collections.abc", "contextlib", "copy",
    "csv", "dataclasses", "datetime", "decimal", "enum", "fnmatch", "fractions", "functools",
    "glob", "hashlib", "heapq", "io", "itertools", "json", "math", "operator", "os", "pathlib",
    "pprint", "random", "re", "shlex", "shutil", "statistics", "string", "struct", "textwrap",
    "time", "traceback", "types", "typing", "unicodedata", "warnings", NULL};

/* This job's argv, read from the host (libc's copy is not refreshed by any constructor). */
static int read_args(int *argc_out, char ***argv_out) {
  __wasi_size_t argc = 0, buf_size = 0;
  if (__wasi_args_sizes_get(&argc, &buf_size) != 0) return -1;
  char **argv = calloc(argc + 1, sizeof(char *));
  char *buf = malloc(buf_size + 1);
  if (argv == NULL || buf == NULL) return -1;
  if (__wasi_args_get((uint8_t **)argv, (uint8_t *)buf) != 0) return -1;
  *argc_out = (int)argc;
  *argv_out = argv;
  return 0;
}

static void fail(const char *what) {
  fprintf(stderr, "python.wasm (snapshot entry): %s\n", what);
  if (PyErr_Occurred()) PyErr_Print();
  exit(2);
}

__attribute__((export_name("wizer.initialize"))) void sprawling_python_initialize(void) {
  int argc = 0;
  char **argv = NULL;
  if (read_args(&argc, &argv) != 0 || argc < 1) fail("cannot read the initialisation's argv");
  /* The configuration of a cold `python3.11` with no options (Modules/main.c pymain_init). The
   * hash secret comes from the host's randomness (use_hash_seed stays 0): one per snapshot. */
  PyConfig config;
  PyConfig_InitPythonConfig(&config);
  PyStatus status = PyConfig_SetBytesArgv(&config, 1, argv);
  if (!PyStatus_Exception(status)) status = Py_InitializeFromConfig(&config);
  PyConfig_Clear(&config);
  if (PyStatus_Exception(status)) Py_ExitStatusException(status);

  for (const char *const *name = preimported; *name != NULL; ++name) {
    PyObject *module = PyImport_ImportModule(*name);
    if (module == NULL) fail("a module of the preimported set failed to import");
    Py_DECREF(module);
  }
  /* Nothing buffered may survive into the image; the objects made so far move to the permanent
   * generation so that a job's collections do not write (copy) their pages. */
  if (PyRun_SimpleString("import gc as _g; _g.collect(); _g.freeze(); del _g") != 0)
    fail("gc.freeze failed");
  PyObject *out = PySys_GetObject("stdout");
  PyObject *err = PySys_GetObject("stderr");
  if (out != NULL) Py_XDECREF(PyObject_CallMethod(out, "flush", NULL));
  if (err != NULL) Py_XDECREF(PyObject_CallMethod(err, "flush", NULL));
  PyErr_Clear();
}

/* The forms of command line a resumed job accepts: everything else was decided at
 * initialisation (interpreter options, -X, -W) and needs a cold start. */
static const char *unsupported_argument(int argc, char **argv) {
  if (argc < 2) return NULL;                                  /* stdin */
  const char *first = argv[1];
  if (strcmp(first, "-c") == 0 || strcmp(first, "-m") == 0) return argc >= 3 ? NULL : first;
  if (first[0] != '-' || strcmp(first, "-") == 0) return NULL; /* a script, or stdin */
  return first;
}

/* os.environ wraps posix.environ (a dict of bytes); refill that same dict from libc's environ,
 * which the constructors just re-read from this job's host. */
static void refill_environ(void) {
  PyObject *posix = PyImport_ImportModule("posix");
  PyObject *env = posix ? PyObject_GetAttrString(posix, "environ") : NULL;
  if (env == NULL || !PyDict_Check(env)) fail("posix.environ is missing");
  PyDict_Clear(env);
  for (char **e = environ; e != NULL && *e != NULL; ++e) {
    const char *eq = strchr(*e, '=');
    if (eq == NULL || eq == *e) continue;
    PyObject *key = PyBytes_FromStringAndSize(*e, eq - *e);
    PyObject *value = PyBytes_FromString(eq + 1);
    if (key == NULL || value == NULL || PyDict_SetItem(env, key, value) != 0) fail("cannot fill os.environ");
    Py_DECREF(key);
    Py_DECREF(value);
  }
  Py_DECREF(env);
  Py_DECREF(posix);
}

__attribute__((export_name("wizer.resume"))) void sprawling_python_resume(void) {
  if (!Py_IsInitialized()) fail("wizer.resume called without wizer.initialize having run");
  int argc = 0;
  char **argv = NULL;
  if (read_args(&argc, &argv) != 0 || argc < 1) fail("cannot read this job's argv");
  const char *bad = unsupported_argument(argc, argv);
  if (bad != NULL) {
    fprintf(stderr,
            "python.wasm (snapshot entry): '%s' cannot be honoured by a job started from a snapshot; "
            "run it cold (sprawl python --no-snapshot)\n", bad);
    exit(2);
  }
  for (char **e = environ; e != NULL && *e != NULL; ++e) {
    if (strncmp(*e, "PYTHON", 6) == 0) {
      fprintf(stderr,
              "python.wasm (snapshot entry): %.*s is read at initialisation, which a job started from a "
              "snapshot skipped; run it cold (sprawl python --no-snapshot)\n",
              (int)strcspn(*e, "="), *e);
      exit(2);
    }
  }
  refill_environ();

  /* Re-run configuration with this job's argv: sys.argv, sys.orig_argv and the -c/-m/script to
   * run (Py_RunMain reads them), keeping sys.path as initialisation + site left it. */
  PyConfig config;
  PyConfig_InitPythonConfig(&config);
  if (_PyInterpreterState_GetConfigCopy(&config) != 0) fail("cannot copy the interpreter's configuration");
  PyObject *path = PySys_GetObject("path");
  if (path == NULL || !PyList_Check(path)) fail("sys.path is missing");
  const Py_ssize_t n = PyList_GET_SIZE(path);
  wchar_t **items = PyMem_RawCalloc((size_t)n + 1, sizeof(wchar_t *));
  for (Py_ssize_t i = 0; i < n; ++i) {
    items[i] = PyUnicode_AsWideCharString(PyList_GET_ITEM(path, i), NULL);
    if (items[i] == NULL) fail("sys.path holds a non-string");
  }
  PyStatus status = PyConfig_SetWideStringList(&config, &config.module_search_paths, n, items);
  for (Py_ssize_t i = 0; i < n; ++i) PyMem_Free(items[i]);
  PyMem_RawFree(items);
  config.module_search_paths_set = 1;
  if (!PyStatus_Exception(status)) status = PyConfig_SetWideStringList(&config, &config.orig_argv, 0, NULL);
  if (!PyStatus_Exception(status)) status = PyConfig_SetBytesArgv(&config, argc, argv);
  if (PyStatus_Exception(status)) Py_ExitStatusException(status);
  config.parse_argv = 1;
  if (_PyInterpreterState_SetConfig(&config) != 0) fail("cannot apply this job's configuration");
  PyConfig_Clear(&config);

  /* Per-job randomness: random's hidden instance was seeded at initialisation (os.urandom reads
   * the host per call; the str hash secret is per snapshot, see docs/python.md). */
  PyObject *random = PyImport_ImportModule("random");
  PyObject *seeded = random ? PyObject_CallMethod(random, "seed", NULL) : NULL;
  if (seeded == NULL) fail("cannot reseed random");
  Py_DECREF(seeded);
  Py_DECREF(random);

  exit(Py_RunMain());
}
