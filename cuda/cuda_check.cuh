/*
 * cuda_check.cuh - the one CUDA error check, for every .cu file in cuda/.
 *
 * CUDA_CHECK(call) runs a CUDA runtime call; on failure it logs the call,
 * CUDA's message and the place once (core/log.h) and jumps to the caller's
 * `fail` label, where the function cleans up and returns ERR_DEVICE (or its
 * own code). CUDA-side only: the plain C headers beside it carry no CUDA
 * types.
 *
 * cuda_capture_graph(stream, enqueue, &exec, what, keep) captures what
 * enqueue(stream) launches into an instantiated graph. keep, when not
 * NULL, receives the captured graph itself (the caller destroys it after
 * the exec): a node's parameters in the exec are changed through the
 * graph's node (cudaGraphExecMemcpyNodeSetParams1D). On failure it logs
 * once ("WHAT: no CUDA graph (reason); launching kernel by kernel"),
 * clears the capture's error so that it is not the next call's, and
 * returns false: the caller then launches kernel by kernel for good.
 *
 * cuda_graph_node(graph, type, match) is the first node of that type for
 * which match(node) is true, or NULL (graphs of up to 64 nodes): how a
 * caller finds, in a captured graph, the node whose parameters it changes
 * in the exec later.
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

/* Thread-local capture: another stage's thread may be calling CUDA
 * meanwhile. */
template <class Enqueue>
static bool cuda_capture_graph(cudaStream_t stream, Enqueue enqueue, cudaGraphExec_t *exec, const char *what,
			       cudaGraph_t *keep = NULL)
{
	cudaGraph_t graph = NULL;
	*exec = NULL;
	if (keep)
		*keep = NULL;
	cudaError_t e = cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
	if (e == cudaSuccess) {
		cudaError_t e1 = enqueue(stream);
		e = cudaStreamEndCapture(stream, &graph);
		if (e == cudaSuccess)
			e = e1;
	}
	if (e == cudaSuccess)
		e = cudaGraphInstantiate(exec, graph, 0);
	if (graph && (e != cudaSuccess || !keep))
		cudaGraphDestroy(graph);
	else if (graph)
		*keep = graph;
	if (e != cudaSuccess) {
		cudaGetLastError();
		log_warn("%s: no CUDA graph (%s); launching kernel by kernel", what, cudaGetErrorString(e));
		*exec = NULL;
		return false;
	}
	return true;
}

template <class Match>
static cudaGraphNode_t cuda_graph_node(cudaGraph_t graph, cudaGraphNodeType type, Match match)
{
	cudaGraphNode_t nodes[64];
	size_t n = 0;
	if (cudaGraphGetNodes(graph, NULL, &n) != cudaSuccess || n > 64 || cudaGraphGetNodes(graph, nodes, &n) != cudaSuccess)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		cudaGraphNodeType t;
		if (cudaGraphNodeGetType(nodes[i], &t) == cudaSuccess && t == type && match(nodes[i]))
			return nodes[i];
	}
	return NULL;
}

#endif
