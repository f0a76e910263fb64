/*
 * cuda_check.cuh - the one CUDA error check, for every .cu file in cuda/.
 *
 * CUDA_CHECK(call) runs a CUDA runtime call; on failure it logs the call,
 * CUDA's message and the place once (core/log.h) and jumps to the caller's
 * `fail` label, where the function cleans up and returns ERR_DEVICE (or its
 * own code). CUDA-side only: the plain C headers beside it carry no CUDA
 * types.
 */
#ifndef TT_CUDA_CHECK_CUH
#define TT_CUDA_CHECK_CUH

#include <cuda_runtime.h>

extern "C" {
#include "../src/core/err.h"
#include "../src/core/log.h"
}

#define CUDA_CHECK(call)                                                                             \
	do {                                                                                         \
		cudaError_t e_ = (call);                                                             \
		if (e_ != cudaSuccess) {                                                             \
			log_error("cuda: %s failed: %s (%s:%d)", #call, cudaGetErrorString(e_), __FILE__, \
				  __LINE__);                                                         \
			goto fail;                                                                   \
		}                                                                                    \
	} while (0)

#endif
