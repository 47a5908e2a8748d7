/* Tests of the C API (src/capi/sprawling.cpp) from a C11 program: every outcome kind, every error
 * code, mounts, module bytes and paths, every limit of the config, tiers and tier-up, snapshots,
 * streamed stdin, sinks, argument checks and threads. */
#define _POSIX_C_SOURCE 200809L
#include <sprawling/sprawling.h>

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int failures = 0;
static const char* guest_path = NULL;

#define CHECK(cond)                                                   \
  do {                                                                \
    if (!(cond)) {                                                    \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                     \
    }                                                                 \
  } while (0)

/* The canonical "ok\n" guest, as text (the engine takes .wat as well as .wasm). */
static const char ok_wat[] =
    "(module\n"
    "  (import \"wasi_snapshot_preview1\" \"fd_write\" (func $w (param i32 i32 i32 i32) (result i32)))\n"
    "  (memory (export \"memory\") 1)\n"
    "  (data (i32.const 8) \"ok\\n\")\n"
    "  (func (export \"_start\")\n"
    "    (i32.store (i32.const 0) (i32.const 8)) (i32.store (i32.const 4) (i32.const 3))\n"
    "    (drop (call $w (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 16)))))\n";

/* Exits with the sign bit of 0/0 computed from a local: x86 makes the NaN 0xFFC00000 (exit 1),
 * NaN canonicalization the canonical 0x7FC00000 (exit 0). */
static const char nan_sign_wat[] =
    "(module\n"
    "  (import \"wasi_snapshot_preview1\" \"proc_exit\" (func $exit (param i32)))\n"
    "  (memory (export \"memory\") 1)\n"
    "  (func (export \"_start\") (local f32)\n"
    "    (call $exit (i32.shr_u (i32.reinterpret_f32 (f32.div (local.get 0) (local.get 0))) (i32.const 31)))))\n";

/* Asks for a capability the sandbox does not grant. */
static const char denied_wat[] =
    "(module (import \"env\" \"open_socket\" (func (param i32) (result i32)))\n"
    "  (memory (export \"memory\") 1) (func (export \"_start\")))\n";

/* Resource limits: modules that define what each limit counts (checked at instantiation). */
static const char two_tables_wat[] =
    "(module (table 1 funcref) (table 1 funcref) (memory (export \"memory\") 1) (func (export \"_start\")))";
static const char big_table_wat[] =
    "(module (table 1000 funcref) (memory (export \"memory\") 1) (func (export \"_start\")))";
static const char one_memory_wat[] = "(module (memory (export \"memory\") 1) (func (export \"_start\")))";

/* A module with an initialisation export: prints "snap\n" when it starts from the initialised
 * instance, "cold\n" when _start runs on a fresh one. */
static const char snapshot_wat[] =
    "(module\n"
    "  (import \"wasi_snapshot_preview1\" \"fd_write\" (func $w (param i32 i32 i32 i32) (result i32)))\n"
    "  (memory (export \"memory\") 1)\n"
    "  (global $inited (mut i32) (i32.const 0))\n"
    "  (data (i32.const 16) \"cold\\nsnap\\n\")\n"
    "  (func (export \"wizer.initialize\") (global.set $inited (i32.const 1)))\n"
    "  (func (export \"_start\")\n"
    "    (i32.store (i32.const 0) (i32.add (i32.const 16) (i32.mul (global.get $inited) (i32.const 5))))\n"
    "    (i32.store (i32.const 4) (i32.const 5))\n"
    "    (drop (call $w (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))\n";

/* A job running the test guest with `args` after argv[0]. */
static sprawling_job* guest_job(const char* const* args, uint64_t fuel) {
  sprawling_job* job = NULL;
  CHECK(sprawling_job_new(&job) == SPRAWLING_OK);
  CHECK(sprawling_job_set_module_path(job, guest_path) == SPRAWLING_OK);
  CHECK(sprawling_job_add_arg(job, "guest", SPRAWLING_NUL_TERMINATED) == SPRAWLING_OK);
  for (; args != NULL && *args != NULL; ++args) CHECK(sprawling_job_add_arg(job, *args, SPRAWLING_NUL_TERMINATED) == SPRAWLING_OK);
  CHECK(sprawling_job_set_fuel(job, fuel) == SPRAWLING_OK);
  return job;
}

/* Runs and expects an outcome (NULL, counted as a failure, when the run gave an error). */
static sprawling_outcome* run_ok(sprawling_sandbox* sandbox, const sprawling_job* job) {
  sprawling_outcome* outcome = NULL;
  sprawling_error* error = NULL;
  sprawling_status status = sprawling_run(sandbox, job, &outcome, &error);
  if (status != SPRAWLING_OK) {
    fprintf(stderr, "  run: %s %s: %s\n", sprawling_status_name(status), error ? sprawling_error_code(error) : "",
            error ? sprawling_error_message(error) : "");
    ++failures;
  }
  sprawling_error_free(error);
  return outcome;
}

/* Runs and expects an error with `code`; returns the error for more checks (caller frees). */
static sprawling_error* run_error(sprawling_sandbox* sandbox, const sprawling_job* job, const char* code) {
  sprawling_outcome* outcome = NULL;
  sprawling_error* error = NULL;
  CHECK(sprawling_run(sandbox, job, &outcome, &error) == SPRAWLING_ERROR);
  CHECK(outcome == NULL);
  CHECK(error != NULL);
  if (error != NULL && strcmp(sprawling_error_code(error), code) != 0) {
    fprintf(stderr, "  expected %s, got %s: %s\n", code, sprawling_error_code(error), sprawling_error_message(error));
    ++failures;
  }
  sprawling_outcome_free(outcome);
  return error;
}

/* Runs the test guest with `args` in a job of its own and expects an outcome. */
static sprawling_outcome* run_guest(sprawling_sandbox* sandbox, const char* const* args, uint64_t fuel) {
  sprawling_job* job = guest_job(args, fuel);
  sprawling_outcome* outcome = run_ok(sandbox, job);
  sprawling_job_free(job);
  return outcome;
}

static int stdout_is(const sprawling_outcome* outcome, const char* text) {
  size_t len = 0;
  const uint8_t* bytes = sprawling_outcome_stdout(outcome, &len);
  return len == strlen(text) && (len == 0 || memcmp(bytes, text, len) == 0);
}

static int stderr_contains(const sprawling_outcome* outcome, const char* text) {
  size_t len = 0;
  const uint8_t* bytes = sprawling_outcome_stderr(outcome, &len);
  char buf[512] = {0};
  memcpy(buf, bytes, len < sizeof buf - 1 ? len : sizeof buf - 1);
  return strstr(buf, text) != NULL;
}

static sprawling_sandbox* sandbox_with(const sprawling_config* config) {
  sprawling_sandbox* sandbox = NULL;
  CHECK(sprawling_sandbox_new(config, &sandbox) == SPRAWLING_OK);
  return sandbox;
}

/* A job running `text` (a module's text or bytes) with argv[0] `name`. */
static sprawling_job* bytes_job(const char* text, const char* name) {
  sprawling_job* job = NULL;
  CHECK(sprawling_job_new(&job) == SPRAWLING_OK);
  CHECK(sprawling_job_set_module_bytes(job, (const uint8_t*)text, strlen(text)) == SPRAWLING_OK);
  CHECK(sprawling_job_add_arg(job, name, SPRAWLING_NUL_TERMINATED) == SPRAWLING_OK);
  CHECK(sprawling_job_set_fuel(job, 10000000) == SPRAWLING_OK);
  return job;
}

/* Runs `text` in a sandbox made from `config`: 1 when it ran to success, 0 when it was refused
 * with `refused_code` (anything else is a failed check). */
static int runs_under(const sprawling_config* config, const char* text, const char* refused_code) {
  sprawling_sandbox* sandbox = sandbox_with(config);
  sprawling_job* job = bytes_job(text, "limits");
  sprawling_outcome* outcome = NULL;
  sprawling_error* error = NULL;
  const sprawling_status status = sprawling_run(sandbox, job, &outcome, &error);
  int ran = 0;
  if (status == SPRAWLING_OK) {
    ran = sprawling_outcome_exit_kind(outcome) == SPRAWLING_EXIT_SUCCESS;
    CHECK(ran);
  } else {
    CHECK(status == SPRAWLING_ERROR && error != NULL && strcmp(sprawling_error_code(error), refused_code) == 0);
  }
  sprawling_outcome_free(outcome);
  sprawling_error_free(error);
  sprawling_job_free(job);
  sprawling_sandbox_free(sandbox);
  return ran;
}

static void test_outcome_kinds(void) {
  sprawling_sandbox* sandbox = sandbox_with(NULL);
  const char* hello[] = {"hello", NULL};
  sprawling_outcome* outcome = run_guest(sandbox, hello, 10000000);
  CHECK(outcome != NULL && sprawling_outcome_exit_kind(outcome) == SPRAWLING_EXIT_SUCCESS);
  CHECK(stdout_is(outcome, "hello\n"));
  CHECK(sprawling_outcome_exit_code(outcome) == 0);
  CHECK(sprawling_outcome_trap_message(outcome) == NULL);
  CHECK(sprawling_outcome_fuel_consumed(outcome) > 0 && sprawling_outcome_fuel_consumed(outcome) < 10000000);
  CHECK(sprawling_outcome_wall_time_ns(outcome) > 0);
  CHECK(sprawling_outcome_peak_memory_bytes(outcome) >= 65536);
  CHECK(!sprawling_outcome_stdout_truncated(outcome) && !sprawling_outcome_stderr_truncated(outcome));
  sprawling_outcome_free(outcome);

  const char* fail7[] = {"exit", "7", NULL};
  outcome = run_guest(sandbox, fail7, 10000000);
  CHECK(outcome != NULL && sprawling_outcome_exit_kind(outcome) == SPRAWLING_EXIT_FAILURE);
  CHECK(sprawling_outcome_exit_code(outcome) == 7);
  sprawling_outcome_free(outcome);

  const char* loop[] = {"loop", NULL};
  outcome = run_guest(sandbox, loop, 100000);
  CHECK(outcome != NULL && sprawling_outcome_exit_kind(outcome) == SPRAWLING_EXIT_FUEL_EXHAUSTED);
  CHECK(sprawling_outcome_fuel_consumed(outcome) == 100000);
  sprawling_outcome_free(outcome);

  const char* trap[] = {"trap", NULL};
  outcome = run_guest(sandbox, trap, 10000000);
  CHECK(outcome != NULL && sprawling_outcome_exit_kind(outcome) == SPRAWLING_EXIT_TRAP);
  CHECK(sprawling_outcome_trap_message(outcome) != NULL && strstr(sprawling_outcome_trap_message(outcome), "unreachable") != NULL);
  sprawling_outcome_free(outcome);

  const char* err[] = {"stderr", NULL};
  outcome = run_guest(sandbox, err, 10000000);
  CHECK(outcome != NULL && stdout_is(outcome, "") && stderr_contains(outcome, "to stderr\n"));
  sprawling_outcome_free(outcome);
  sprawling_sandbox_free(sandbox);

  CHECK(strcmp(sprawling_exit_kind_name(SPRAWLING_EXIT_FUEL_EXHAUSTED), "fuel_exhausted") == 0);
}

static void test_deadline(void) {
  sprawling_config* config = NULL;
  CHECK(sprawling_config_new(&config) == SPRAWLING_OK);
  CHECK(sprawling_config_set_timeout_ns(config, 50 * 1000 * 1000) == SPRAWLING_OK);
  sprawling_sandbox* sandbox = sandbox_with(config);
  sprawling_config_free(config); /* the sandbox holds its own copy */
  const char* loop[] = {"loop", NULL};
  sprawling_outcome* outcome = run_guest(sandbox, loop, UINT64_MAX);
  CHECK(outcome != NULL && sprawling_outcome_exit_kind(outcome) == SPRAWLING_EXIT_TRAP);
  CHECK(outcome != NULL && strcmp(sprawling_outcome_trap_message(outcome), "deadline exceeded") == 0);
  sprawling_outcome_free(outcome);
  sprawling_sandbox_free(sandbox);
}

static void test_stdin_argv_env(void) {
  sprawling_sandbox* sandbox = sandbox_with(NULL);
  const char* cat[] = {"cat", NULL};
  sprawling_job* job = guest_job(cat, 10000000);
  const uint8_t input[] = {'i', 'n', 0, '\n'};
  CHECK(sprawling_job_set_stdin(job, input, sizeof input) == SPRAWLING_OK);
  sprawling_outcome* outcome = run_ok(sandbox, job);
  size_t len = 0;
  const uint8_t* out = sprawling_outcome_stdout(outcome, &len);
  CHECK(len == sizeof input && memcmp(out, input, len) == 0);
  sprawling_outcome_free(outcome);
  sprawling_job_free(job);

  const char* args[] = {"args", "x", "y z", NULL};
  job = guest_job(args, 10000000);
  CHECK(sprawling_job_add_env(job, "K", SPRAWLING_NUL_TERMINATED, "V=1", 3) == SPRAWLING_OK);
  outcome = run_ok(sandbox, job);
  CHECK(stdout_is(outcome, "x\ny z\nK=V=1\n"));
  sprawling_outcome_free(outcome);
  sprawling_job_free(job);
  sprawling_sandbox_free(sandbox);
}

static void test_mounts(void) {
  char ro[] = "/tmp/sprawling-capi-ro-XXXXXX";
  char rw[] = "/tmp/sprawling-capi-rw-XXXXXX";
  CHECK(mkdtemp(ro) != NULL && mkdtemp(rw) != NULL);
  char path[256];
  snprintf(path, sizeof path, "%s/in.txt", ro);
  FILE* f = fopen(path, "w");
  CHECK(f != NULL);
  if (f != NULL) {
    fputs("from host", f);
    fclose(f);
  }
  sprawling_sandbox* sandbox = sandbox_with(NULL);

  const char* read[] = {"read", "/in/in.txt", NULL};
  sprawling_job* job = guest_job(read, 10000000);
  CHECK(sprawling_job_add_mount(job, ro, "/in", 0) == SPRAWLING_OK);
  sprawling_outcome* outcome = run_ok(sandbox, job);
  CHECK(stdout_is(outcome, "from host"));
  sprawling_outcome_free(outcome);
  sprawling_job_free(job);

  const char* refused[] = {"write", "/in/new.txt", "data", NULL};
  job = guest_job(refused, 10000000);
  CHECK(sprawling_job_add_mount(job, ro, "/in", 0) == SPRAWLING_OK);
  outcome = run_ok(sandbox, job);
  CHECK(outcome != NULL && sprawling_outcome_exit_kind(outcome) == SPRAWLING_EXIT_FAILURE);
  CHECK(sprawling_outcome_exit_code(outcome) == 3);
  snprintf(path, sizeof path, "%s/new.txt", ro);
  CHECK(access(path, F_OK) != 0);
  sprawling_outcome_free(outcome);
  sprawling_job_free(job);

  const char* allowed[] = {"write", "/out/new.txt", "data", NULL};
  job = guest_job(allowed, 10000000);
  CHECK(sprawling_job_add_mount(job, rw, "/out", 1) == SPRAWLING_OK);
  outcome = run_ok(sandbox, job);
  CHECK(outcome != NULL && sprawling_outcome_exit_kind(outcome) == SPRAWLING_EXIT_SUCCESS);
  snprintf(path, sizeof path, "%s/new.txt", rw);
  CHECK(access(path, F_OK) == 0);
  sprawling_outcome_free(outcome);
  sprawling_job_free(job);
  sprawling_sandbox_free(sandbox);

  unlink(path);
  snprintf(path, sizeof path, "%s/in.txt", ro);
  unlink(path);
  rmdir(ro);
  rmdir(rw);
}

static void test_module_bytes(void) {
  sprawling_sandbox* sandbox = sandbox_with(NULL);
  sprawling_job* job = NULL;
  CHECK(sprawling_job_new(&job) == SPRAWLING_OK);
  CHECK(sprawling_job_set_module_bytes(job, (const uint8_t*)ok_wat, sizeof ok_wat - 1) == SPRAWLING_OK);
  sprawling_outcome* outcome = run_ok(sandbox, job);
  CHECK(stdout_is(outcome, "ok\n"));
  sprawling_outcome_free(outcome);

  /* The binary guest, read into memory. */
  FILE* f = fopen(guest_path, "rb");
  CHECK(f != NULL);
  static uint8_t binary[1 << 20];
  size_t n = f != NULL ? fread(binary, 1, sizeof binary, f) : 0;
  if (f != NULL) fclose(f);
  CHECK(n > 8 && n < sizeof binary);
  CHECK(sprawling_job_set_module_bytes(job, binary, n) == SPRAWLING_OK);
  CHECK(sprawling_job_add_arg(job, "guest", SPRAWLING_NUL_TERMINATED) == SPRAWLING_OK);
  CHECK(sprawling_job_add_arg(job, "hello", SPRAWLING_NUL_TERMINATED) == SPRAWLING_OK);
  outcome = run_ok(sandbox, job);
  CHECK(stdout_is(outcome, "hello\n"));
  sprawling_outcome_free(outcome);
  sprawling_job_free(job);
  sprawling_sandbox_free(sandbox);
}

static void test_errors(void) {
  sprawling_sandbox* sandbox = sandbox_with(NULL);
  sprawling_job* job = NULL;

  CHECK(sprawling_job_new(&job) == SPRAWLING_OK);
  CHECK(sprawling_job_set_module_bytes(job, (const uint8_t*)denied_wat, sizeof denied_wat - 1) == SPRAWLING_OK);
  sprawling_error* error = run_error(sandbox, job, "E_SANDBOX_DENIED");
  CHECK(sprawling_error_detail_count(error) == 1);
  CHECK(strcmp(sprawling_error_detail_key(error, 0), "import") == 0);
  CHECK(strcmp(sprawling_error_detail_value(error, 0), "env::open_socket") == 0);
  CHECK(sprawling_error_detail_key(error, 1) == NULL);
  CHECK(sprawling_error_alternative(error) == NULL);
  sprawling_error_free(error);

  const uint8_t garbage[] = {0, 'a', 's', 'm', 9, 9, 9, 9, 1};
  CHECK(sprawling_job_set_module_bytes(job, garbage, sizeof garbage) == SPRAWLING_OK);
  error = run_error(sandbox, job, "E_INVALID_MODULE");
  /* Module bytes are named as such, never by the memory file's /proc path. */
  CHECK(strstr(sprawling_error_message(error), "the module bytes") != NULL);
  CHECK(strstr(sprawling_error_message(error), "/proc/") == NULL);
  sprawling_error_free(error);
  sprawling_job_free(job);

  CHECK(sprawling_job_new(&job) == SPRAWLING_OK);
  error = run_error(sandbox, job, "E_INVALID_JOB"); /* no module */
  sprawling_error_free(error);
  CHECK(sprawling_job_set_module_path(job, "/nonexistent/guest.wasm") == SPRAWLING_OK);
  error = run_error(sandbox, job, "E_INVALID_JOB");
  sprawling_error_free(error);
  sprawling_job_free(job);

  const char* hello[] = {"hello", NULL};
  job = guest_job(hello, 10000000);
  CHECK(sprawling_job_add_mount(job, "/nonexistent/dir", "/in", 0) == SPRAWLING_OK);
  error = run_error(sandbox, job, "E_INVALID_JOB");
  sprawling_error_free(error);
  sprawling_job_free(job);

  job = guest_job(hello, 10000000);
  CHECK(sprawling_job_add_arg(job, "a\0b", 3) == SPRAWLING_OK);
  error = run_error(sandbox, job, "E_INVALID_JOB");
  sprawling_error_free(error);
  sprawling_job_free(job);

  const char* exit200[] = {"exit", "200", NULL};
  job = guest_job(exit200, 10000000);
  error = run_error(sandbox, job, "E_SANDBOX_HOST");
  sprawling_error_free(error);
  sprawling_job_free(job);

  /* The caller may decline the detail. */
  job = guest_job(exit200, 10000000);
  sprawling_outcome* outcome = NULL;
  CHECK(sprawling_run(sandbox, job, &outcome, NULL) == SPRAWLING_ERROR && outcome == NULL);
  sprawling_job_free(job);
  sprawling_sandbox_free(sandbox);
}

static void test_engine_absent_or_present(void) {
  /* E_TOOL_UNAVAILABLE is this build's verdict only without the engine. */
  sprawling_sandbox* sandbox = sandbox_with(NULL);
  sprawling_job* job = NULL;
  CHECK(sprawling_job_new(&job) == SPRAWLING_OK);
  CHECK(sprawling_job_set_module_bytes(job, (const uint8_t*)ok_wat, sizeof ok_wat - 1) == SPRAWLING_OK);
  if (sprawling_engine_available()) {
    sprawling_outcome* outcome = run_ok(sandbox, job);
    CHECK(stdout_is(outcome, "ok\n"));
    sprawling_outcome_free(outcome);
  } else {
    sprawling_error* error = run_error(sandbox, job, "E_TOOL_UNAVAILABLE");
    CHECK(sprawling_error_alternative(error) != NULL);
    sprawling_error_free(error);
  }
  sprawling_job_free(job);
  sprawling_sandbox_free(sandbox);
  CHECK(strcmp(sprawling_version(), "0.1.0") >= 0);
  /* Nothing has tiered up yet. Stopping is for the rest of the process, so with the engine it
   * waits for test_tier_up; without it, it is a no-op, repeatable. */
  CHECK(sprawling_tier_up_busy() == 0);
  if (!sprawling_engine_available()) {
    sprawling_stop_tier_up();
    sprawling_stop_tier_up();
    CHECK(sprawling_tier_up_busy() == 0);
  }
}

static void test_limits(void) {
  sprawling_config* config = NULL;
  CHECK(sprawling_config_new(&config) == SPRAWLING_OK);
  CHECK(sprawling_config_set_max_stdout_bytes(config, 3) == SPRAWLING_OK);
  CHECK(sprawling_config_set_max_memory_bytes(config, 16u << 20) == SPRAWLING_OK);
  sprawling_sandbox* sandbox = sandbox_with(config);
  sprawling_config_free(config);

  const char* hello[] = {"hello", NULL};
  sprawling_outcome* outcome = run_guest(sandbox, hello, 10000000);
  CHECK(sprawling_outcome_stdout_truncated(outcome) == 1);
  size_t len = 99;
  sprawling_outcome_stdout(outcome, &len);
  CHECK(len <= 3);
  sprawling_outcome_free(outcome);

  const char* grow[] = {"grow", "64", NULL};
  outcome = run_guest(sandbox, grow, UINT64_MAX);
  CHECK(sprawling_outcome_exit_kind(outcome) == SPRAWLING_EXIT_FAILURE && sprawling_outcome_exit_code(outcome) == 4);
  CHECK(sprawling_outcome_peak_memory_bytes(outcome) <= (16u << 20));
  sprawling_outcome_free(outcome);
  sprawling_sandbox_free(sandbox);

  /* Unmetered fuel: the budget is ignored and nothing is counted. */
  CHECK(sprawling_config_new(&config) == SPRAWLING_OK);
  CHECK(sprawling_config_set_meter_fuel(config, 0) == SPRAWLING_OK);
  CHECK(sprawling_config_set_deterministic(config, 1) == SPRAWLING_OK);
  CHECK(sprawling_config_set_random_seed(config, 42) == SPRAWLING_OK);
  CHECK(sprawling_config_set_hostcall_copy_limit(config, 1u << 20) == SPRAWLING_OK);
  sandbox = sandbox_with(config);
  sprawling_config_free(config);
  outcome = run_guest(sandbox, hello, 1);
  CHECK(sprawling_outcome_exit_kind(outcome) == SPRAWLING_EXIT_SUCCESS && stdout_is(outcome, "hello\n"));
  CHECK(sprawling_outcome_fuel_consumed(outcome) == 0);
  sprawling_outcome_free(outcome);
  sprawling_sandbox_free(sandbox);
}

static void test_resource_limits(void) {
  sprawling_config* config = NULL;
  CHECK(sprawling_config_new(&config) == SPRAWLING_OK);
  /* The defaults admit every one of these modules. */
  CHECK(runs_under(config, two_tables_wat, "") && runs_under(config, big_table_wat, "") &&
        runs_under(config, one_memory_wat, ""));

  CHECK(sprawling_config_set_max_tables(config, 1) == SPRAWLING_OK);
  CHECK(!runs_under(config, two_tables_wat, "E_INVALID_MODULE"));
  CHECK(sprawling_config_set_max_tables(config, 2) == SPRAWLING_OK);
  CHECK(runs_under(config, two_tables_wat, ""));

  CHECK(sprawling_config_set_max_table_elements(config, 999) == SPRAWLING_OK);
  CHECK(!runs_under(config, big_table_wat, "E_INVALID_MODULE"));
  CHECK(sprawling_config_set_max_table_elements(config, 1000) == SPRAWLING_OK);
  CHECK(runs_under(config, big_table_wat, ""));

  CHECK(sprawling_config_set_max_memories(config, 0) == SPRAWLING_OK);
  CHECK(!runs_under(config, one_memory_wat, "E_INVALID_MODULE"));
  CHECK(sprawling_config_set_max_memories(config, 1) == SPRAWLING_OK);
  CHECK(runs_under(config, one_memory_wat, ""));

  /* A 64 KiB memory does not fit a 4 KiB store; clearing restores the default. */
  CHECK(sprawling_config_set_max_store_bytes(config, 4096) == SPRAWLING_OK);
  CHECK(!runs_under(config, one_memory_wat, "E_INVALID_MODULE"));
  CHECK(sprawling_config_clear_max_store_bytes(config) == SPRAWLING_OK);
  CHECK(runs_under(config, one_memory_wat, ""));
  sprawling_config_free(config);
}

/* The disk write quota: a 4-byte write passes a quota of 4 and fails (EDQUOT) under one of 3. */
static void test_disk_quota(void) {
  char rw[] = "/tmp/sprawling-capi-quota-XXXXXX";
  CHECK(mkdtemp(rw) != NULL);
  const char* write4[] = {"write", "/out/f.txt", "data", NULL};
  for (uint64_t quota = 3; quota <= 4; ++quota) {
    sprawling_config* config = NULL;
    CHECK(sprawling_config_new(&config) == SPRAWLING_OK);
    CHECK(sprawling_config_set_max_disk_write_bytes(config, quota) == SPRAWLING_OK);
    sprawling_sandbox* sandbox = sandbox_with(config);
    sprawling_config_free(config);
    sprawling_job* job = guest_job(write4, 10000000);
    CHECK(sprawling_job_add_mount(job, rw, "/out", 1) == SPRAWLING_OK);
    sprawling_outcome* outcome = run_ok(sandbox, job);
    if (quota == 4) {
      CHECK(sprawling_outcome_exit_kind(outcome) == SPRAWLING_EXIT_SUCCESS);
      CHECK(sprawling_outcome_disk_write_bytes(outcome) == 4);
    } else {
      CHECK(sprawling_outcome_exit_kind(outcome) == SPRAWLING_EXIT_FAILURE && sprawling_outcome_exit_code(outcome) == 3);
      CHECK(sprawling_outcome_disk_write_bytes(outcome) <= 3);
    }
    sprawling_outcome_free(outcome);
    sprawling_job_free(job);
    sprawling_sandbox_free(sandbox);
  }
  char path[256];
  snprintf(path, sizeof path, "%s/f.txt", rw);
  unlink(path);
  rmdir(rw);
}

/* Every tier gives the same output and the same fuel (auto with a code-cache folder, which holds
 * nothing, so it interprets); without the compiled tier, compile is refused with
 * E_TOOL_UNAVAILABLE naming the interpreter. */
static void test_tiers(void) {
  CHECK(strcmp(sprawling_tier_name(SPRAWLING_TIER_INTERPRET), "interpret") == 0);
  CHECK(strcmp(sprawling_tier_name(SPRAWLING_TIER_COMPILE), "compile") == 0);
  CHECK(strcmp(sprawling_tier_name(SPRAWLING_TIER_AUTO), "auto") == 0);
  char cache[] = "/tmp/sprawling-capi-cache-XXXXXX";
  CHECK(mkdtemp(cache) != NULL);
  uint64_t fuel[3] = {0, 0, 0};
  const sprawling_tier tiers[3] = {SPRAWLING_TIER_INTERPRET, SPRAWLING_TIER_COMPILE, SPRAWLING_TIER_AUTO};
  for (int i = 0; i < 3; ++i) {
    sprawling_config* config = NULL;
    CHECK(sprawling_config_new(&config) == SPRAWLING_OK);
    CHECK(sprawling_config_set_tier(config, tiers[i]) == SPRAWLING_OK);
    /* A compile on first use within 64 MiB of heap (this module needs far less). */
    if (tiers[i] == SPRAWLING_TIER_COMPILE)
      CHECK(sprawling_config_set_compile_memory_bytes(config, (uint64_t)64 << 20) == SPRAWLING_OK);
    if (tiers[i] == SPRAWLING_TIER_AUTO) {
      CHECK(sprawling_config_set_code_cache_dir(config, cache) == SPRAWLING_OK);
      CHECK(sprawling_config_set_code_cache_max_bytes(config, (uint64_t)64 << 20) == SPRAWLING_OK);
    }
    sprawling_sandbox* sandbox = sandbox_with(config);
    sprawling_config_free(config);
    sprawling_job* job = bytes_job(ok_wat, "ok");
    if (tiers[i] == SPRAWLING_TIER_COMPILE && !sprawling_compiled_tier_available()) {
      sprawling_error* error = run_error(sandbox, job, "E_TOOL_UNAVAILABLE");
      CHECK(sprawling_error_alternative(error) != NULL);
      sprawling_error_free(error);
      fuel[i] = fuel[0];
    } else {
      sprawling_outcome* outcome = run_ok(sandbox, job);
      CHECK(stdout_is(outcome, "ok\n"));
      fuel[i] = sprawling_outcome_fuel_consumed(outcome);
      sprawling_outcome_free(outcome);
    }
    sprawling_job_free(job);
    sprawling_sandbox_free(sandbox);
  }
  CHECK(fuel[0] > 0 && fuel[0] == fuel[1] && fuel[0] == fuel[2]);
  rmdir(cache);
  /* NaN canonicalization: the canonical NaN on every tier (off: x86's negative default NaN). */
  for (int t = 0; t < 2; ++t) {
    if (t == 1 && !sprawling_compiled_tier_available()) break;
    for (int canonical = 0; canonical < 2; ++canonical) {
      sprawling_config* config = NULL;
      CHECK(sprawling_config_new(&config) == SPRAWLING_OK);
      CHECK(sprawling_config_set_tier(config, t == 0 ? SPRAWLING_TIER_INTERPRET : SPRAWLING_TIER_COMPILE) == SPRAWLING_OK);
      CHECK(sprawling_config_set_nan_canonicalization(config, canonical) == SPRAWLING_OK);
      sprawling_sandbox* sandbox = sandbox_with(config);
      sprawling_config_free(config);
      sprawling_job* job = bytes_job(nan_sign_wat, "nan");
      sprawling_outcome* outcome = run_ok(sandbox, job);
      CHECK(sprawling_outcome_exit_kind(outcome) == (canonical ? SPRAWLING_EXIT_SUCCESS : SPRAWLING_EXIT_FAILURE));
      CHECK(sprawling_outcome_exit_code(outcome) == (canonical ? 0 : 1));
      sprawling_outcome_free(outcome);
      sprawling_job_free(job);
      sprawling_sandbox_free(sandbox);
    }
  }
  CHECK(sprawling_config_set_nan_canonicalization(NULL, 1) == SPRAWLING_EINVAL);
}

/* Runs `args` of the test guest in a sandbox made from `config` and checks the outcome against
 * `expected` (the interpreter's): the same exit, stdout and fuel. */
static void same_as(const sprawling_config* config, const char* const* args, const sprawling_outcome* expected) {
  sprawling_sandbox* sandbox = sandbox_with(config);
  sprawling_outcome* outcome = run_guest(sandbox, args, UINT64_MAX);
  size_t len = 0;
  const uint8_t* bytes = sprawling_outcome_stdout(expected, &len);
  char text[64] = {0};
  memcpy(text, bytes, len < sizeof text - 1 ? len : sizeof text - 1);
  CHECK(outcome != NULL && sprawling_outcome_exit_kind(outcome) == sprawling_outcome_exit_kind(expected));
  CHECK(stdout_is(outcome, text));
  CHECK(sprawling_outcome_fuel_consumed(outcome) == sprawling_outcome_fuel_consumed(expected));
  sprawling_outcome_free(outcome);
  sprawling_sandbox_free(sandbox);
}

/* Tier-up: auto with tier-up on gives the interpreter's output, exit and fuel on the run
 * that makes `spin` hot (its loop: each 1024 rounds count as 128 calls, so 200,000 rounds pass the
 * 1,000-call threshold set here, read once per process) and on the run after its compilation
 * ended, which calls the machine code. Where the compiled tier is built, the compilation is seen
 * in the perf map tier-up writes (SPRAWLING_JIT_PERFMAP): what it compiled, not when. The stop
 * call ends the background thread, may be repeated, and jobs still run after it. Without the
 * compiled tier the setter works and every job is interpreted, nothing ever busy. */
static void test_tier_up(void) {
  CHECK(setenv("SPRAWLING_JIT_TIER_UP_CALLS", "1000", 1) == 0);
  CHECK(setenv("SPRAWLING_JIT_PERFMAP", "1", 1) == 0);
  char perf_map[64];
  snprintf(perf_map, sizeof perf_map, "/tmp/perf-%ld.map", (long)getpid());
  unlink(perf_map);

  const char* spin[] = {"spin", "200000", NULL};
  sprawling_config* config = NULL;
  CHECK(sprawling_config_new(&config) == SPRAWLING_OK);
  CHECK(sprawling_config_set_tier(config, SPRAWLING_TIER_INTERPRET) == SPRAWLING_OK);
  sprawling_sandbox* interpreter = sandbox_with(config);
  sprawling_outcome* expected = run_guest(interpreter, spin, UINT64_MAX);
  sprawling_sandbox_free(interpreter);
  CHECK(expected != NULL && sprawling_outcome_exit_kind(expected) == SPRAWLING_EXIT_SUCCESS);

  CHECK(sprawling_config_set_tier(config, SPRAWLING_TIER_AUTO) == SPRAWLING_OK);
  CHECK(sprawling_config_set_tier_up(config, 1) == SPRAWLING_OK);
  same_as(config, spin, expected); /* makes spin hot: its compilation is queued */
  /* A generous bound for one small function (LLVM's set-up included), not a timing assertion. */
  for (int waited_ms = 0; sprawling_tier_up_busy() && waited_ms < 120000; waited_ms += 10) {
    const struct timespec ten_ms = {0, 10 * 1000 * 1000};
    nanosleep(&ten_ms, NULL);
  }
  CHECK(!sprawling_tier_up_busy());
  same_as(config, spin, expected); /* spin's machine code, where it was compiled */
  struct stat st;
  if (sprawling_compiled_tier_available()) {
    CHECK(stat(perf_map, &st) == 0 && st.st_size > 0);
  } else {
    CHECK(stat(perf_map, &st) != 0);
  }

  sprawling_stop_tier_up();
  sprawling_stop_tier_up();
  CHECK(!sprawling_tier_up_busy());
  same_as(config, spin, expected); /* nothing more compiles; the job runs all the same */
  sprawling_outcome_free(expected);
  sprawling_config_free(config);
  unlink(perf_map);
}

static int folder_holds_a_file(const char* dir) {
  DIR* d = opendir(dir);
  int found = 0;
  for (struct dirent* e; d != NULL && (e = readdir(d)) != NULL;) found |= e->d_name[0] != '.';
  if (d != NULL) closedir(d);
  return found;
}

static void remove_folder(const char* dir) {
  DIR* d = opendir(dir);
  char path[512];
  for (struct dirent* e; d != NULL && (e = readdir(d)) != NULL;) {
    if (e->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    unlink(path);
  }
  if (d != NULL) closedir(d);
  rmdir(dir);
}

static void test_snapshots(void) {
  char dir[] = "/tmp/sprawling-capi-snap-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char snapshots[sizeof dir + 16];
  snprintf(snapshots, sizeof snapshots, "%s/snapshots", dir); /* created by the sandbox */
  sprawling_config* config = NULL;
  CHECK(sprawling_config_new(&config) == SPRAWLING_OK);
  CHECK(sprawling_config_set_snapshot_dir(config, snapshots) == SPRAWLING_OK);
  sprawling_sandbox* sandbox = sandbox_with(config);
  sprawling_config_free(config);

  /* Enabled by default: the first job builds the snapshot (kept in the folder), both start from it.
   * argv[0] is part of the snapshot's key: this one is the test's own. */
  for (int i = 0; i < 2; ++i) {
    sprawling_job* job = bytes_job(snapshot_wat, "capi-snapshot-dir");
    sprawling_outcome* outcome = run_ok(sandbox, job);
    CHECK(stdout_is(outcome, "snap\n") && sprawling_outcome_from_snapshot(outcome) == 1);
    sprawling_outcome_free(outcome);
    sprawling_job_free(job);
  }
  CHECK(folder_holds_a_file(snapshots));

  /* Disabled: _start runs on a fresh instance. */
  sprawling_job* job = bytes_job(snapshot_wat, "capi-snapshot-dir");
  CHECK(sprawling_job_set_snapshot(job, 0, 0) == SPRAWLING_OK);
  sprawling_outcome* outcome = run_ok(sandbox, job);
  CHECK(stdout_is(outcome, "cold\n") && sprawling_outcome_from_snapshot(outcome) == 0);
  sprawling_outcome_free(outcome);

  /* init_mounts the job cannot meet is the caller's mistake, not a silent cold start. */
  CHECK(sprawling_job_set_snapshot(job, 1, 1) == SPRAWLING_OK);
  sprawling_error* error = run_error(sandbox, job, "E_INVALID_JOB");
  CHECK(error != NULL && strstr(sprawling_error_message(error), "init_mounts") != NULL);
  sprawling_error_free(error);
  CHECK(sprawling_job_add_mount(job, dir, "/init", 0) == SPRAWLING_OK);
  outcome = run_ok(sandbox, job);
  CHECK(stdout_is(outcome, "snap\n"));
  sprawling_outcome_free(outcome);
  sprawling_job_free(job);
  sprawling_sandbox_free(sandbox);
  remove_folder(snapshots);
  rmdir(dir);
}

/* Streamed stdin: the guest reads a pipe on demand; a closed fd is refused. */
static void test_stdin_fd(void) {
  int fds[2];
  CHECK(pipe(fds) == 0);
  const char text[] = "streamed\n";
  CHECK(write(fds[1], text, sizeof text - 1) == (ssize_t)(sizeof text - 1));
  close(fds[1]);
  sprawling_sandbox* sandbox = sandbox_with(NULL);
  const char* cat[] = {"cat", NULL};
  sprawling_job* job = guest_job(cat, 10000000);
  CHECK(sprawling_job_set_stdin_fd(job, fds[0]) == SPRAWLING_OK);
  sprawling_outcome* outcome = run_ok(sandbox, job);
  CHECK(stdout_is(outcome, text));
  sprawling_outcome_free(outcome);
  /* Closed between setting and running: E_INVALID_JOB; once closed, the setter refuses it. */
  close(fds[0]);
  sprawling_error* error = run_error(sandbox, job, "E_INVALID_JOB");
  CHECK(error != NULL && strstr(sprawling_error_message(error), "stdin fd") != NULL);
  sprawling_error_free(error);
  CHECK(sprawling_job_set_stdin_fd(job, fds[0]) == SPRAWLING_EINVAL);
  /* Bytes replace the fd. */
  CHECK(sprawling_job_set_stdin(job, (const uint8_t*)"b", 1) == SPRAWLING_OK);
  outcome = run_ok(sandbox, job);
  CHECK(stdout_is(outcome, "b"));
  sprawling_outcome_free(outcome);
  sprawling_job_free(job);
  sprawling_sandbox_free(sandbox);
}

struct collected {
  char bytes[64];
  size_t len;
};

static void collect(void* user, const uint8_t* bytes, size_t len) {
  struct collected* c = user;
  for (size_t i = 0; i < len && c->len < sizeof c->bytes; ++i) c->bytes[c->len++] = (char)bytes[i];
}

static void test_sinks(void) {
  struct collected out = {{0}, 0};
  struct collected err = {{0}, 0};
  sprawling_config* config = NULL;
  CHECK(sprawling_config_new(&config) == SPRAWLING_OK);
  CHECK(sprawling_config_set_stdout_sink(config, collect, &out) == SPRAWLING_OK);
  CHECK(sprawling_config_set_stderr_sink(config, collect, &err) == SPRAWLING_OK);
  sprawling_sandbox* sandbox = sandbox_with(config);
  sprawling_config_free(config);
  const char* hello[] = {"hello", NULL};
  sprawling_outcome* outcome = run_guest(sandbox, hello, 10000000);
  CHECK(out.len == 6 && memcmp(out.bytes, "hello\n", 6) == 0);
  CHECK(err.len == 0);
  CHECK(stdout_is(outcome, "hello\n"));
  sprawling_outcome_free(outcome);
  sprawling_sandbox_free(sandbox);
}

static void test_invalid_arguments(void) {
  sprawling_config* config = NULL;
  sprawling_job* job = NULL;
  sprawling_sandbox* sandbox = NULL;
  sprawling_outcome* outcome = NULL;
  CHECK(sprawling_config_new(NULL) == SPRAWLING_EINVAL);
  CHECK(sprawling_config_new(&config) == SPRAWLING_OK);
  CHECK(sprawling_config_set_timeout_ns(config, 0) == SPRAWLING_EINVAL);
  CHECK(sprawling_config_set_timeout_ns(config, UINT64_MAX) == SPRAWLING_EINVAL);
  CHECK(sprawling_config_clear_timeout(config) == SPRAWLING_OK);
  CHECK(sprawling_config_set_max_memory_bytes(NULL, 1) == SPRAWLING_EINVAL);
  CHECK(sprawling_sandbox_new(config, NULL) == SPRAWLING_EINVAL);
  CHECK(sprawling_job_new(NULL) == SPRAWLING_EINVAL);
  CHECK(sprawling_job_new(&job) == SPRAWLING_OK);
  CHECK(sprawling_job_set_module_path(job, NULL) == SPRAWLING_EINVAL);
  CHECK(sprawling_job_set_module_bytes(job, NULL, 4) == SPRAWLING_EINVAL);
  CHECK(sprawling_job_add_arg(job, NULL, 0) == SPRAWLING_EINVAL);
  CHECK(sprawling_job_add_env(job, "K", 1, NULL, 0) == SPRAWLING_EINVAL);
  CHECK(sprawling_job_set_stdin(job, NULL, 1) == SPRAWLING_EINVAL);
  CHECK(sprawling_job_set_stdin(job, NULL, 0) == SPRAWLING_OK);
  CHECK(sprawling_job_add_mount(job, "/tmp", NULL, 0) == SPRAWLING_EINVAL);
  CHECK(sprawling_job_set_fuel(NULL, 1) == SPRAWLING_EINVAL);
  /* Every limit refuses a NULL config, and the 32-bit counts refuse what does not fit. */
  CHECK(sprawling_config_set_max_table_elements(NULL, 1) == SPRAWLING_EINVAL);
  CHECK(sprawling_config_set_max_table_elements(config, (uint64_t)UINT32_MAX + 1) == SPRAWLING_EINVAL);
  CHECK(sprawling_config_set_max_table_elements(config, UINT32_MAX) == SPRAWLING_OK);
  CHECK(sprawling_config_set_max_tables(NULL, 1) == SPRAWLING_EINVAL);
  CHECK(sprawling_config_set_max_tables(config, (uint64_t)UINT32_MAX + 1) == SPRAWLING_EINVAL);
  CHECK(sprawling_config_set_max_memories(NULL, 1) == SPRAWLING_EINVAL);
  CHECK(sprawling_config_set_max_memories(config, UINT64_MAX) == SPRAWLING_EINVAL);
  CHECK(sprawling_config_set_max_store_bytes(NULL, 1) == SPRAWLING_EINVAL);
  CHECK(sprawling_config_clear_max_store_bytes(NULL) == SPRAWLING_EINVAL);
  CHECK(sprawling_config_set_max_disk_write_bytes(NULL, 1) == SPRAWLING_EINVAL);
  CHECK(sprawling_config_set_tier(NULL, SPRAWLING_TIER_INTERPRET) == SPRAWLING_EINVAL);
  CHECK(sprawling_config_set_tier(config, (sprawling_tier)99) == SPRAWLING_EINVAL);
  CHECK(sprawling_config_set_tier_up(NULL, 1) == SPRAWLING_EINVAL);
  CHECK(sprawling_config_set_tier_up(config, 7) == SPRAWLING_OK); /* any non-zero value: on */
  CHECK(sprawling_config_set_tier_up(config, 0) == SPRAWLING_OK);
  CHECK(sprawling_tier_name((sprawling_tier)99) == NULL);
  CHECK(sprawling_config_set_snapshot_dir(NULL, "/tmp") == SPRAWLING_EINVAL);
  CHECK(sprawling_config_set_snapshot_dir(config, NULL) == SPRAWLING_OK);
  CHECK(sprawling_config_set_code_cache_dir(NULL, "/tmp") == SPRAWLING_EINVAL);
  CHECK(sprawling_config_set_code_cache_dir(config, NULL) == SPRAWLING_OK);
  CHECK(sprawling_config_set_code_cache_max_bytes(config, 0) == SPRAWLING_EINVAL);
  CHECK(sprawling_config_set_code_cache_max_bytes(NULL, 1) == SPRAWLING_EINVAL);
  CHECK(sprawling_config_set_compile_memory_bytes(NULL, 1) == SPRAWLING_EINVAL);
  CHECK(sprawling_config_set_compile_memory_bytes(config, 0) == SPRAWLING_OK); /* no limit */
  CHECK(sprawling_job_set_snapshot(NULL, 1, 0) == SPRAWLING_EINVAL);
  CHECK(sprawling_job_set_stdin_fd(NULL, 0) == SPRAWLING_EINVAL);
  CHECK(sprawling_job_set_stdin_fd(job, -1) == SPRAWLING_EINVAL);
  CHECK(sprawling_outcome_disk_write_bytes(NULL) == 0 && sprawling_outcome_from_snapshot(NULL) == 0);
  CHECK(sprawling_sandbox_new(config, &sandbox) == SPRAWLING_OK);
  CHECK(sprawling_run(NULL, job, &outcome, NULL) == SPRAWLING_EINVAL);
  CHECK(sprawling_run(sandbox, NULL, &outcome, NULL) == SPRAWLING_EINVAL);
  CHECK(sprawling_run(sandbox, job, NULL, NULL) == SPRAWLING_EINVAL);
  CHECK(strcmp(sprawling_status_name(SPRAWLING_EINVAL), "SPRAWLING_EINVAL") == 0);
  /* Accessors on NULL are harmless. */
  CHECK(sprawling_outcome_trap_message(NULL) == NULL && sprawling_error_code(NULL) == NULL);
  sprawling_outcome_free(NULL);
  sprawling_error_free(NULL);
  sprawling_sandbox_free(sandbox);
  sprawling_job_free(job);
  sprawling_config_free(config);
}

/* Threads: each runs jobs in its own sandbox, and all share one more sandbox (serialized). */
struct worker {
  sprawling_sandbox* shared;
  int ok;
};

static void* work(void* arg) {
  struct worker* w = arg;
  sprawling_sandbox* own = NULL;
  w->ok = sprawling_sandbox_new(NULL, &own) == SPRAWLING_OK;
  const char* spin[] = {"spin", "100000", NULL};
  for (int i = 0; i < 3; ++i) {
    sprawling_job* job = guest_job(spin, UINT64_MAX);
    sprawling_outcome* a = run_ok(own, job);
    sprawling_outcome* b = run_ok(w->shared, job);
    w->ok = w->ok && a != NULL && b != NULL && sprawling_outcome_exit_kind(a) == SPRAWLING_EXIT_SUCCESS &&
            sprawling_outcome_fuel_consumed(a) == sprawling_outcome_fuel_consumed(b);
    sprawling_outcome_free(a);
    sprawling_outcome_free(b);
    sprawling_job_free(job);
  }
  sprawling_sandbox_free(own);
  return NULL;
}

/* Cancels `arg` (a sprawling_cancel*) after 100 ms, from its own thread. */
static void* cancel_later(void* arg) {
  const struct timespec pause = {0, 100 * 1000 * 1000};
  nanosleep(&pause, NULL);
  sprawling_cancel_request((sprawling_cancel*)arg);
  return NULL;
}

static void test_cancel(void) {
  sprawling_cancel* cancel = NULL;
  CHECK(sprawling_cancel_new(&cancel) == SPRAWLING_OK);
  CHECK(sprawling_cancel_requested(cancel) == 0);
  sprawling_sandbox* sandbox = sandbox_with(NULL); /* no deadline: only the cancel stops the loop */
  sprawling_job* job = NULL;
  CHECK(sprawling_job_new(&job) == SPRAWLING_OK);
  CHECK(sprawling_job_set_module_path(job, guest_path) == SPRAWLING_OK);
  CHECK(sprawling_job_add_arg(job, "guest", SPRAWLING_NUL_TERMINATED) == SPRAWLING_OK);
  CHECK(sprawling_job_add_arg(job, "loop", SPRAWLING_NUL_TERMINATED) == SPRAWLING_OK);
  CHECK(sprawling_job_set_cancel(job, cancel) == SPRAWLING_OK);
  pthread_t canceller;
  CHECK(pthread_create(&canceller, NULL, cancel_later, cancel) == 0);
  sprawling_outcome* outcome = NULL;
  CHECK(sprawling_run(sandbox, job, &outcome, NULL) == SPRAWLING_OK);
  pthread_join(canceller, NULL);
  CHECK(sprawling_cancel_requested(cancel) == 1);
  CHECK(outcome != NULL && sprawling_outcome_exit_kind(outcome) == SPRAWLING_EXIT_TRAP);
  CHECK(outcome != NULL && strcmp(sprawling_outcome_trap_message(outcome), "cancelled") == 0);
  CHECK(sprawling_outcome_cancelled(outcome) == 1);
  sprawling_outcome_free(outcome);
  /* Without the cancel the same job holder runs to its fuel's end, not cancelled. */
  CHECK(sprawling_job_set_cancel(job, NULL) == SPRAWLING_OK);
  CHECK(sprawling_job_set_fuel(job, 100000) == SPRAWLING_OK);
  outcome = NULL;
  CHECK(sprawling_run(sandbox, job, &outcome, NULL) == SPRAWLING_OK);
  CHECK(outcome != NULL && sprawling_outcome_exit_kind(outcome) == SPRAWLING_EXIT_FUEL_EXHAUSTED);
  CHECK(sprawling_outcome_cancelled(outcome) == 0);
  sprawling_outcome_free(outcome);
  sprawling_job_free(job);
  sprawling_sandbox_free(sandbox);
  sprawling_cancel_free(cancel);
}

static void test_features(void) {
  size_t count = 0;
  while (sprawling_feature_name(count) != NULL) ++count;
  CHECK(count >= 9);
  CHECK(strcmp(sprawling_feature_name(0), "simd") == 0);
  sprawling_config* config = NULL;
  CHECK(sprawling_config_new(&config) == SPRAWLING_OK);
  CHECK(sprawling_config_set_feature(config, "no-such-feature", 0) == SPRAWLING_EINVAL);
  CHECK(sprawling_config_set_feature(NULL, "simd", 0) == SPRAWLING_EINVAL);
  const char* tail_call = "(module (memory (export \"memory\") 1) (func $f) (func (export \"_start\") (return_call $f)))";
  CHECK(runs_under(config, tail_call, "E_INVALID_MODULE") == 1);
  CHECK(sprawling_config_set_feature(config, "tail-call", 0) == SPRAWLING_OK);
  CHECK(runs_under(config, tail_call, "E_INVALID_MODULE") == 0);
  sprawling_config_free(config);
}

static void test_threads(void) {
  sprawling_sandbox* shared = sandbox_with(NULL);
  pthread_t threads[4];
  struct worker workers[4];
  for (int i = 0; i < 4; ++i) {
    workers[i] = (struct worker){shared, 0};
    CHECK(pthread_create(&threads[i], NULL, work, &workers[i]) == 0);
  }
  for (int i = 0; i < 4; ++i) {
    pthread_join(threads[i], NULL);
    CHECK(workers[i].ok);
  }
  sprawling_sandbox_free(shared);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s GUEST.wasm (the test guest tests/capi/guest.c, built by the build)\n", argv[0]);
    return 2;
  }
  guest_path = argv[1];
  test_engine_absent_or_present();
  test_invalid_arguments();
  if (sprawling_engine_available()) {
    test_outcome_kinds();
    test_deadline();
    test_stdin_argv_env();
    test_mounts();
    test_module_bytes();
    test_errors();
    test_limits();
    test_resource_limits();
    test_disk_quota();
    test_tiers();
    test_tier_up();
    test_snapshots();
    test_stdin_fd();
    test_sinks();
    test_threads();
    test_cancel();
    test_features();
  }
  if (failures != 0) {
    fprintf(stderr, "capi: %d check(s) failed\n", failures);
    return 1;
  }
  puts("capi: all checks passed");
  return 0;
}
