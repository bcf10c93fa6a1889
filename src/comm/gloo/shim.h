/* The C face of Gloo (shim.cc, C++): contexts rendezvoused through a caller's key-value store,
 * collectives on host buffers, and nonblocking transfers that can be tested without waiting.
 * gloo/host.c builds the communicator's host transport on it. Every call catches what Gloo
 * throws and returns a tessera status (0, TESSERA_ERR_TIMEOUT when a peer did not arrive in
 * time, TESSERA_ERR_BACKEND for other failures, TESSERA_ERR_NOMEM) with a sentence in why (at
 * most len bytes). A context's calls may come from several threads: it serialises them. */
#ifndef TSR_COMM_GLOO_SHIM_H
#define TSR_COMM_GLOO_SHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tessera/comm.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tsr_gloo tsr_gloo_t;           /* one Gloo context over every process */
typedef struct tsr_gloo_xfer tsr_gloo_xfer_t; /* one nonblocking transfer */

/** Makes a context over the processes of `store` (copied; its prefix too), its keys under
 *  "<prefix>/<name>/", waiting at most timeout_s for the others. `parent` NULL: a TCP device on
 *  this host's name is made; else the parent's device and store are shared (a channel). A
 *  collective call. */
int tsr_gloo_connect(const tessera_comm_store_t *store, const tsr_gloo_t *parent, const char *name,
                     double timeout_s, tsr_gloo_t **out, char *why, size_t len);
/** Frees the context (its sockets close). */
void tsr_gloo_free(tsr_gloo_t *g);

/* Collectives, complete on return or failed within the context's timeout (a timeout closes
 * the context's connections: later calls fail). */
int tsr_gloo_broadcast(tsr_gloo_t *g, void *buf, size_t bytes, int root, char *why, size_t len);
/** recv = op over the processes of send (recv may be send); count elements of type. */
int tsr_gloo_allreduce(tsr_gloo_t *g, const void *send, void *recv, size_t count,
                       tessera_comm_type_t type, tessera_reduce_t op, char *why, size_t len);
/** recv of root = op over the processes of send. */
int tsr_gloo_reduce(tsr_gloo_t *g, const void *send, void *recv, size_t count,
                    tessera_comm_type_t type, tessera_reduce_t op, int root, char *why, size_t len);
/** recv (size * bytes) = the processes' send blocks in rank order. */
int tsr_gloo_allgather(tsr_gloo_t *g, const void *send, void *recv, size_t bytes, char *why,
                       size_t len);
int tsr_gloo_barrier(tsr_gloo_t *g, char *why, size_t len);
/** A blocking send (or receive) of bytes at buf to (from) peer under `slot`. */
int tsr_gloo_sendrecv(tsr_gloo_t *g, bool receive, void *buf, size_t bytes, int peer, uint64_t slot,
                      char *why, size_t len);

/** Posts a send (or receive) of bytes at buf to (from) peer under `slot`; transfers of one slot
 *  between two processes match in the order posted. */
int tsr_gloo_post(tsr_gloo_t *g, bool receive, void *buf, size_t bytes, int peer, uint64_t slot,
                  tsr_gloo_xfer_t **out, char *why, size_t len);
/** 1 when the transfer is done, 0 while it is not, or a failure status: never waits. */
int tsr_gloo_test(tsr_gloo_xfer_t *x, char *why, size_t len);
/** Frees a transfer, done or not: Gloo lets go of its buffer (a receive still pending is
 *  withdrawn). */
void tsr_gloo_xfer_free(tsr_gloo_xfer_t *x);

/** "Gloo 0.5.0 (TCP)" into buf. */
void tsr_gloo_version(char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
