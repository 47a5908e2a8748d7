/* A C consumer of the installed package: runs a text module given as bytes through the C API. */
#include <sprawling/sprawling.h>

#include <stdio.h>
#include <string.h>

static const char ok_wat[] =
    "(module\n"
    "  (import \"wasi_snapshot_preview1\" \"fd_write\" (func $w (param i32 i32 i32 i32) (result i32)))\n"
    "  (memory (export \"memory\") 1)\n"
    "  (data (i32.const 8) \"ok\\n\")\n"
    "  (func (export \"_start\")\n"
    "    (i32.store (i32.const 0) (i32.const 8)) (i32.store (i32.const 4) (i32.const 3))\n"
    "    (drop (call $w (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 16)))))\n";

int main(void) {
  sprawling_sandbox* sandbox = NULL;
  sprawling_job* job = NULL;
  sprawling_outcome* outcome = NULL;
  sprawling_error* error = NULL;
  int ok = sprawling_sandbox_new(NULL, &sandbox) == SPRAWLING_OK && sprawling_job_new(&job) == SPRAWLING_OK &&
           sprawling_job_set_module_bytes(job, (const unsigned char*)ok_wat, sizeof ok_wat - 1) == SPRAWLING_OK &&
           sprawling_job_set_fuel(job, 1000000) == SPRAWLING_OK;
  const sprawling_status status = ok ? sprawling_run(sandbox, job, &outcome, &error) : SPRAWLING_EINVAL;
  if (sprawling_engine_available()) {
    size_t len = 0;
    const unsigned char* out = status == SPRAWLING_OK ? sprawling_outcome_stdout(outcome, &len) : NULL;
    ok = status == SPRAWLING_OK && sprawling_outcome_exit_kind(outcome) == SPRAWLING_EXIT_SUCCESS && len == 3 &&
         memcmp(out, "ok\n", 3) == 0;
  } else {
    ok = status == SPRAWLING_ERROR && strcmp(sprawling_error_code(error), "E_TOOL_UNAVAILABLE") == 0;
  }
  if (!ok) {
    printf("consumer_c: the installed C API failed (%s%s%s)\n", sprawling_status_name(status),
           error != NULL ? ": " : "", error != NULL ? sprawling_error_message(error) : "");
  } else {
    printf("consumer_c: ok (libsprawling %s, engine %s)\n", sprawling_version(),
           sprawling_engine_available() ? "built in" : "absent");
  }
  sprawling_outcome_free(outcome);
  sprawling_error_free(error);
  sprawling_job_free(job);
  sprawling_sandbox_free(sandbox);
  return ok ? 0 : 1;
}
