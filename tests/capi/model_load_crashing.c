/* Loads the checkpoint named by argv[1] into an inference-only model (no MPI_Init) and prints the outcome:
 * "status N: <last error>" and exit 0 on any status, so a caller can tell an error from a death by a signal. */
#include <stdio.h>

#include <sluice/sluice.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s CHECKPOINT\n", argv[0]);
    return 2;
  }
  sluice_model* model = NULL;
  const sluice_status status = sluice_model_load(argv[1], &model);
  printf("status %d: %s\n", (int)status, status == SLUICE_OK ? "ok" : sluice_last_error());
  sluice_model_destroy(model);
  return 0;
}
