/* Embedding the sandbox from C (sprawling.h, libsprawling): runs the wordcount guest on a file of
 * a host folder mounted read-only, with a fuel budget, and prints what came out.
 *
 *   embed_c wordcount.wasm examples/data     (guest and folder as arguments) */
#include <sprawling/sprawling.h>

#include <inttypes.h>
#include <stdio.h>

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s GUEST.wasm FOLDER\n", argv[0]);
    return 2;
  }
  sprawling_config* config;
  sprawling_config_new(&config);
  sprawling_config_set_timeout_ns(config, 5000000000u); /* 5 s of wall clock at most */
  sprawling_sandbox* sandbox;
  sprawling_sandbox_new(config, &sandbox); /* copies the config */
  sprawling_config_free(config);

  sprawling_job* job;
  sprawling_job_new(&job);
  sprawling_job_set_module_path(job, argv[1]);
  sprawling_job_add_arg(job, "wordcount", SPRAWLING_NUL_TERMINATED);
  sprawling_job_add_arg(job, "/data/poem.txt", SPRAWLING_NUL_TERMINATED);
  sprawling_job_add_mount(job, argv[2], "/data", 0); /* 0: read-only */
  sprawling_job_set_fuel(job, 100000000);

  sprawling_outcome* outcome = NULL;
  sprawling_error* error = NULL;
  int status = 1;
  if (sprawling_run(sandbox, job, &outcome, &error) == SPRAWLING_OK) {
    /* The guest ran: its output, and how it ended. */
    size_t len;
    const uint8_t* out = sprawling_outcome_stdout(outcome, &len);
    fwrite(out, 1, len, stdout);
    switch (sprawling_outcome_exit_kind(outcome)) {
      case SPRAWLING_EXIT_SUCCESS: printf("exit: success"); status = 0; break;
      case SPRAWLING_EXIT_FAILURE: printf("exit: failure %" PRIu64, sprawling_outcome_exit_code(outcome)); break;
      case SPRAWLING_EXIT_FUEL_EXHAUSTED: printf("exit: fuel exhausted"); break;
      case SPRAWLING_EXIT_TRAP: printf("exit: trap (%s)", sprawling_outcome_trap_message(outcome)); break;
    }
    printf(", fuel used: %" PRIu64 "\n", sprawling_outcome_fuel_consumed(outcome));
    sprawling_outcome_free(outcome);
  } else if (error != NULL) {
    /* The job did not run: a stable code to act on, a message for people. */
    fprintf(stderr, "error: %s: %s\n", sprawling_error_code(error), sprawling_error_message(error));
    sprawling_error_free(error);
  }
  sprawling_job_free(job);
  sprawling_sandbox_free(sandbox);
  return status;
}
