/* Snapshot entry points linked into python.wasm by scripts/build-python-wasi (docs/python.md,
 * "Snapshots"): `wizer.initialize` initialises CPython once; `wizer.resume` runs one job from an
 * image of that state. `_start` (CPython's own main) stays the cold path, unchanged.
 *
 * This file deliberately never names __wasm_call_ctors: wasm-ld then wraps each export in "run
 * constructors ... run destructors", so every `wizer.resume` re-runs wasi-libc's constructors,
 * which re-read this job's environment, register this job's preopens (newest entry wins) and
 * restart the emulated process clock.
 *
 * A resumed job ends without CPython's full teardown (Py_FinalizeEx frees every object and module
 * of the image: ~10 M of the ~11.7 M fuel of a `print(1)` job, and most of its copy-on-write page
 * writes). scripts/build-python-wasi links python.wasm with `--wrap=Py_FinalizeEx --wrap=Py_Exit`,
 * so Py_RunMain's and sys.exit's calls land in the wrappers below: on the cold path they call the
 * real functions; in a resumed job they run only the part of finalisation a job can observe
 * (sprawling_finish) and the process exits with the same status. */
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

static void prepare_finish(void);

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
  prepare_finish();
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

/* ---------------------------------------------------------------- a resumed job's ending */

/* What Py_FinalizeEx does that a job can observe, after the atexit callbacks and the first flush
 * of the std streams (sprawling_finish_job): sys.last_* dropped and the std streams restored, as
 * CPython's finalize_modules does first; then the job's own modules (`__main__` and every module
 * imported after initialisation) are removed from sys.modules and their dicts wiped in reverse
 * order of import, as finalize_modules wipes all modules — so a job's objects are freed, their
 * __del__ methods run and its files are closed (flushed) as they would be. The dicts are held
 * and wiped explicitly (CPython lets a module that nothing else holds go by reference count):
 * `__main__`'s dict dates from initialisation, so gc.freeze() put it in the permanent generation,
 * which no collection frees. The preimported modules of
 * the image are left alone: freeing them is invisible to the job and is what made finalisation
 * expensive. Last, any file object the wipe did not free (one a job hung on a preimported
 * module, say) is closed, text layers before buffers before raw files, so no written data is
 * lost. Compiled once, at initialisation; runs with its own globals. */
static const char finish_source[] =
    "def finish(init_modules, clear_dict):\n"
    "    sys.last_type = sys.last_value = sys.last_traceback = None\n"
    "    for name in ('stdin', 'stdout', 'stderr'):\n"
    "        setattr(sys, name, getattr(sys, '__' + name + '__', None))\n"
    "    modules = sys.modules\n"
    "    names = ['__main__'] + [n for n in list(modules) if n not in init_modules]\n"
    "    dicts = []\n"
    "    for name in names:\n"
    "        module = modules.get(name)\n"
    "        if isinstance(module, ModuleType):\n"
    "            dicts.append(module.__dict__)\n"
    "            modules[name] = None\n"
    "    module = None\n"
    "    gc.collect()\n"
    "    for d in reversed(dicts):\n"
    "        clear_dict(d)\n"
    "    dicts = d = None\n"
    "    gc.collect()\n"
    "    left = gc.get_objects()\n"
    "    for layer in (_io._TextIOBase, _io._BufferedIOBase, _io._RawIOBase):\n"
    "        for f in left:\n"
    "            if isinstance(f, layer):\n"
    "                try:\n"
    "                    if not f.closed:\n"
    "                        f.close()\n"
    "                except BaseException:\n"
    "                    pass\n";

static PyObject *finish_function;   /* finish(), compiled at initialisation */
static PyObject *init_module_names; /* frozenset of sys.modules' keys at initialisation */
static int resumed;                 /* set by wizer.resume: the wrappers take the short ending */

static PyObject *clear_module_dict(PyObject *self, PyObject *dict) {
  (void)self;
  if (!PyDict_Check(dict)) {
    PyErr_SetString(PyExc_TypeError, "a module's __dict__ was expected");
    return NULL;
  }
  _PyModule_ClearDict(dict);
  Py_RETURN_NONE;
}
static PyMethodDef clear_module_dict_def = {"clear_module_dict", clear_module_dict, METH_O, NULL};

/* Initialisation's part: compiles finish() and records the preimported modules' names. */
static void prepare_finish(void) {
  PyObject *globals = PyDict_New();
  if (globals == NULL || PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins()) != 0)
    fail("cannot make finish()'s globals");
  static const char *const names[] = {"sys", "gc", "_io", NULL};
  for (const char *const *name = names; *name != NULL; ++name) {
    PyObject *module = PyImport_ImportModule(*name);
    if (module == NULL || PyDict_SetItemString(globals, *name, module) != 0) fail("cannot import for finish()");
    Py_DECREF(module);
  }
  PyObject *types = PyImport_ImportModule("types");
  PyObject *module_type = types ? PyObject_GetAttrString(types, "ModuleType") : NULL;
  if (module_type == NULL || PyDict_SetItemString(globals, "ModuleType", module_type) != 0)
    fail("cannot prepare finish()");
  Py_DECREF(module_type);
  Py_DECREF(types);
  PyObject *done = PyRun_String(finish_source, Py_file_input, globals, globals);
  if (done == NULL) fail("cannot compile finish()");
  Py_DECREF(done);
  finish_function = PyDict_GetItemString(globals, "finish");
  if (finish_function == NULL) fail("finish() is missing");
  Py_INCREF(finish_function);
  Py_DECREF(globals);
  PyObject *modules = PyImport_GetModuleDict();
  init_module_names = modules ? PyFrozenSet_New(modules) : NULL;
  if (init_module_names == NULL) fail("cannot record the preimported modules");
}

/* Flushes sys.stdout and sys.stderr (a closed or missing stream is skipped); -1 when stdout
 * cannot be flushed, which makes the exit status 120, as Py_FinalizeEx's flush does. */
static int flush_std_streams(void) {
  int status = 0;
  static const char *const streams[] = {"stdout", "stderr"};
  for (int i = 0; i < 2; ++i) {
    PyObject *stream = PySys_GetObject(streams[i]);
    if (stream == NULL || stream == Py_None) continue;
    PyObject *closed = PyObject_GetAttrString(stream, "closed");
    const int is_closed = closed != NULL && PyObject_IsTrue(closed) > 0;
    Py_XDECREF(closed);
    PyErr_Clear();
    if (is_closed) continue;
    PyObject *r = PyObject_CallMethod(stream, "flush", NULL);
    if (r == NULL) {
      if (i == 0) PyErr_WriteUnraisable(stream);
      PyErr_Clear();
      status = -1;
    }
    Py_XDECREF(r);
  }
  return status;
}

/* The observable part of Py_FinalizeEx, in its order: threading's shutdown, the atexit
 * callbacks, a flush of the std streams, a collection, the job's modules' teardown
 * (finish_source), a last flush. 0, or -1 when a flush failed. */
extern void _PyAtExit_Call(PyInterpreterState *interp);
static int sprawling_finish_job(void) {
  PyObject *name = PyUnicode_FromString("threading");
  PyObject *threading = name ? PyImport_GetModule(name) : NULL;
  Py_XDECREF(name);
  if (threading != NULL) {
    PyObject *r = PyObject_CallMethod(threading, "_shutdown", NULL);
    if (r == NULL) PyErr_WriteUnraisable(threading);
    Py_XDECREF(r);
    Py_DECREF(threading);
  }
  PyErr_Clear();
  _PyAtExit_Call(PyInterpreterState_Get());
  int status = flush_std_streams();
  PyGC_Collect();
  PyObject *clear = PyCFunction_New(&clear_module_dict_def, NULL);
  PyObject *r = clear ? PyObject_CallFunctionObjArgs(finish_function, init_module_names, clear, NULL) : NULL;
  if (r == NULL) PyErr_WriteUnraisable(finish_function);
  Py_XDECREF(r);
  Py_XDECREF(clear);
  PyErr_Clear();
  if (flush_std_streams() < 0) status = -1;
  return status;
}

/* The link-time wrappers (--wrap): Py_RunMain calls Py_FinalizeEx after the job's code, and
 * sys.exit reaches Py_Exit (pythonrun.c's handle_system_exit). A cold `_start` gets CPython's own. */
int __real_Py_FinalizeEx(void);
void __real_Py_Exit(int status);
int __wrap_Py_FinalizeEx(void) {
  if (!resumed) return __real_Py_FinalizeEx();
  resumed = 0;  /* once: Py_RunMain's pymain_free follows, then exit */
  return sprawling_finish_job();
}
void __wrap_Py_Exit(int status) {
  if (!resumed) __real_Py_Exit(status);
  resumed = 0;
  if (sprawling_finish_job() < 0) status = 120;
  exit(status);
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
  /* _PyConfig_Read would otherwise compute the path configuration again (it runs the frozen
   * getpath module, stat-ing landmark files: most of a job's start-up fuel), although every path
   * field is copied from the initialised interpreter and sys.path is given. The flag is read
   * only while initialising; it is set back on the interpreter's copy below. */
  config._install_importlib = 0;
  if (_PyInterpreterState_SetConfig(&config) != 0) fail("cannot apply this job's configuration");
  PyConfig_Clear(&config);
  ((PyConfig *)_PyInterpreterState_GetConfig(PyInterpreterState_Get()))->_install_importlib = 1;

  /* Per-job randomness: random's hidden instance was seeded at initialisation (os.urandom reads
   * the host per call; the str hash secret is per snapshot, see docs/python.md). */
  PyObject *random = PyImport_ImportModule("random");
  PyObject *seeded = random ? PyObject_CallMethod(random, "seed", NULL) : NULL;
  if (seeded == NULL) fail("cannot reseed random");
  Py_DECREF(seeded);
  Py_DECREF(random);

  resumed = 1;
  exit(Py_RunMain());
}
