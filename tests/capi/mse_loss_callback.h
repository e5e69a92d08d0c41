/* MSE written against sluice_loss_ops (plain C), with the built-in mse's arithmetic in the same order
 * (kernels/cpu/cpu_loss.cc, core/model/loss.cc), so `loss: custom` with it must train bit for bit like `loss: mse`.
 * It counts its calls and can be told to fail. */
#ifndef SLUICE_TESTS_CAPI_MSE_LOSS_CALLBACK_H_
#define SLUICE_TESTS_CAPI_MSE_LOSS_CALLBACK_H_

#include <stdint.h>

#include <sluice/sluice.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mse_loss_callback {
  int64_t calls;    /* micro-batches seen */
  int64_t fail_at;  /* return 3 on this call number (1-based); 0: never */
} mse_loss_callback;

sluice_loss_ops mse_loss_callback_ops(mse_loss_callback* state);

#ifdef __cplusplus
}
#endif

#endif /* SLUICE_TESTS_CAPI_MSE_LOSS_CALLBACK_H_ */
