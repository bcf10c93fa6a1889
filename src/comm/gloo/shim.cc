// Gloo behind a C face (shim.h): a rendezvous store calling the caller's callbacks, contexts over
// Gloo's TCP transport, collectives on host buffers, and transfers whose completion is read
// without waiting. Why not UnboundBuffer::waitRecv/waitSend with a short timeout to test a
// transfer: in Gloo's TCP transport a wait that times out closes every connection of the context
// ("Application timeout caused pair closure"). A transfer here is a tcp::UnboundBuffer of a
// subclass of ours that reads the buffer's completion count under the buffer's own lock.
#include "comm/gloo/shim.h"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/config.h>
#include <gloo/reduce.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/context.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/tcp/unbound_buffer.h>

#include <algorithm>
#include <chrono>
#include <complex>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace {

// What the caller's store says when a key did not come in time.
struct StoreTimeout : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Gloo's rendezvous store over the caller's callbacks, its keys under one namespace.
class CallbackStore : public gloo::rendezvous::Store {
public:
  CallbackStore(const tessera_comm_store_t &s, std::string space, double timeout_s)
      : s_(s), space_(std::move(space)), timeout_s_(timeout_s) {}

  void set(const std::string &key, const std::vector<char> &data) override {
    const std::string k = space_ + key;
    if (s_.set(s_.arg, k.c_str(), data.data(), data.size()) != 0)
      throw std::runtime_error("the key-value store did not set " + k);
  }

  std::vector<char> get(const std::string &key) override {
    const std::string k = space_ + key;
    std::vector<char> v(4096);
    for (;;) {
      size_t n = 0;
      if (s_.get(s_.arg, k.c_str(), v.data(), v.size(), &n, timeout_s_) != 0)
        throw StoreTimeout("the key " + k + " did not come from the key-value store");
      if (n <= v.size()) {
        v.resize(n);
        return v;
      }
      v.resize(n); // the value is longer: again, with room for it
    }
  }

  void wait(const std::vector<std::string> &keys) override {
    for (const auto &k : keys) (void)get(k);
  }
  void wait(const std::vector<std::string> &keys, const std::chrono::milliseconds &) override {
    wait(keys);
  }

private:
  tessera_comm_store_t s_;
  std::string space_;
  double timeout_s_;
};

// A rendezvous context that hands out its transport context (for transfers of our own).
class Context : public gloo::rendezvous::Context {
public:
  using gloo::rendezvous::Context::Context;
  std::shared_ptr<gloo::transport::tcp::Context> tcp() const {
    return std::dynamic_pointer_cast<gloo::transport::tcp::Context>(transportContext_);
  }
};

// A transfer: a TCP unbound buffer whose completion (or failure) is read without waiting.
class Transfer : public gloo::transport::tcp::UnboundBuffer {
public:
  Transfer(const std::shared_ptr<gloo::transport::tcp::Context> &c, void *ptr, size_t size,
           bool receive)
      : gloo::transport::tcp::UnboundBuffer(c, ptr, size), receive_(receive) {}

  // 1: done; 0: not yet; -1: failed, with Gloo's words in *what.
  int poll(std::string *what) {
    std::lock_guard<std::mutex> lock(m_);
    int &done = receive_ ? recvCompletions_ : sendCompletions_;
    if (done > 0) return 1;
    if (!ex_) return 0;
    try {
      std::rethrow_exception(ex_);
    } catch (const std::exception &e) {
      *what = e.what();
    }
    return -1;
  }

private:
  const bool receive_;
};

int say(int status, char *why, size_t len, const std::string &text) {
  if (why && len) std::snprintf(why, len, "%s", text.c_str());
  return status;
}

// Runs f, turning what it throws into a status and a sentence starting with `what`.
template <class F> int guarded(const char *what, char *why, size_t len, F &&f) {
  try {
    f();
    return 0;
  } catch (const StoreTimeout &e) {
    return say(TESSERA_ERR_TIMEOUT, why, len,
               std::string(what) + " failed: " + e.what() +
                   " in time (a process has not arrived).");
  } catch (const std::bad_alloc &) {
    return say(TESSERA_ERR_NOMEM, why, len, std::string(what) + " ran out of memory.");
  } catch (const std::exception &e) {
    const std::string text = e.what();
    // a peer that gave up (its own timeout closes its connections) or stopped reads, from
    // here, as a participant that did not arrive
    const bool late =
        text.find("imed out") != std::string::npos || text.find("imeout") != std::string::npos ||
        text.find("losed") != std::string::npos || text.find("reset by peer") != std::string::npos;
    return say(late ? TESSERA_ERR_TIMEOUT : TESSERA_ERR_BACKEND, why, len,
               std::string(what) + " failed" +
                   (late ? " within the timeout (a participant has not arrived): " : " in Gloo: ") +
                   text.substr(0, 160));
  }
}

// The reductions, elementwise over n elements of T: c = a op b.
template <class T> void sum(void *c, const void *a, const void *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    static_cast<T *>(c)[i] = static_cast<const T *>(a)[i] + static_cast<const T *>(b)[i];
}
template <class T> void prod(void *c, const void *a, const void *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    static_cast<T *>(c)[i] = static_cast<const T *>(a)[i] * static_cast<const T *>(b)[i];
}
template <class T> void lowest(void *c, const void *a, const void *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    static_cast<T *>(c)[i] = std::min(static_cast<const T *>(a)[i], static_cast<const T *>(b)[i]);
}
template <class T> void highest(void *c, const void *a, const void *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    static_cast<T *>(c)[i] = std::max(static_cast<const T *>(a)[i], static_cast<const T *>(b)[i]);
}

using ReduceFn = void (*)(void *, const void *, const void *, size_t);

// The reduction of op on T (MIN and MAX of complex types never come: the API refuses them).
template <class T> ReduceFn reduction(tessera_reduce_t op) {
  switch (op) {
  case TESSERA_SUM:
    return sum<T>;
  case TESSERA_PROD:
    return prod<T>;
  case TESSERA_MIN:
    if constexpr (std::is_arithmetic_v<T>) return lowest<T>;
    break;
  case TESSERA_MAX:
    if constexpr (std::is_arithmetic_v<T>) return highest<T>;
    break;
  }
  return nullptr;
}

// Calls f with a T* of the tessera type's elements (a typed pointer sets Gloo's element size).
template <class F> void typed(tessera_comm_type_t type, F &&f) {
  switch (type) {
  case TESSERA_COMM_F32:
    return f(static_cast<float *>(nullptr));
  case TESSERA_COMM_F64:
    return f(static_cast<double *>(nullptr));
  case TESSERA_COMM_C64:
    return f(static_cast<std::complex<float> *>(nullptr));
  case TESSERA_COMM_C128:
    return f(static_cast<std::complex<double> *>(nullptr));
  case TESSERA_COMM_I32:
    return f(static_cast<int32_t *>(nullptr));
  case TESSERA_COMM_I64:
    return f(static_cast<int64_t *>(nullptr));
  }
}

} // namespace

struct tsr_gloo {
  std::shared_ptr<gloo::transport::Device> device;
  tessera_comm_store_t store;
  std::string prefix; // the caller's, copied
  std::shared_ptr<Context> context;
  std::chrono::milliseconds timeout;
  std::mutex lock; // one call at a time on the context's collectives and posts
};

struct tsr_gloo_xfer {
  std::unique_ptr<Transfer> buf;
};

extern "C" int tsr_gloo_connect(const tessera_comm_store_t *store, const tsr_gloo_t *parent,
                                const char *name, double timeout_s, tsr_gloo_t **out, char *why,
                                size_t len) {
  *out = nullptr;
  std::unique_ptr<tsr_gloo_t> g;
  const int rc = guarded("Meeting the other processes through the key-value store", why, len, [&] {
    g = std::make_unique<tsr_gloo_t>();
    g->store = parent ? parent->store : *store;
    g->prefix = parent ? parent->prefix : std::string(store->prefix ? store->prefix : "");
    g->store.prefix = nullptr; // the copy above is what is used
    g->timeout = std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000));
    if (parent) {
      g->device = parent->device;
    } else {
      gloo::transport::tcp::attr attr; // this host's name, as gethostname gives it
      g->device = gloo::transport::tcp::CreateDevice(attr);
    }
    CallbackStore kv(g->store, g->prefix + "/" + name + "/", timeout_s);
    g->context = std::make_shared<Context>(g->store.rank, g->store.size);
    g->context->setTimeout(g->timeout);
    g->context->connectFullMesh(kv, g->device);
  });
  if (rc == 0) *out = g.release();
  return rc;
}

extern "C" void tsr_gloo_free(tsr_gloo_t *g) {
  delete g;
}

extern "C" int tsr_gloo_broadcast(tsr_gloo_t *g, void *buf, size_t bytes, int root, char *why,
                                  size_t len) {
  std::lock_guard<std::mutex> hold(g->lock);
  return guarded("A broadcast", why, len, [&] {
    gloo::BroadcastOptions o(g->context);
    o.setOutput(static_cast<char *>(buf), bytes);
    o.setRoot(root);
    gloo::broadcast(o);
  });
}

extern "C" int tsr_gloo_allreduce(tsr_gloo_t *g, const void *send, void *recv, size_t count,
                                  tessera_comm_type_t type, tessera_reduce_t op, char *why,
                                  size_t len) {
  std::lock_guard<std::mutex> hold(g->lock);
  return guarded("An all-reduce", why, len, [&] {
    typed(type, [&](auto *t) {
      using T = std::remove_pointer_t<decltype(t)>;
      gloo::AllreduceOptions o(g->context);
      if (send != recv) o.setInput(static_cast<T *>(const_cast<void *>(send)), count);
      o.setOutput(static_cast<T *>(recv), count);
      o.setReduceFunction(reduction<T>(op));
      gloo::allreduce(o);
    });
  });
}

extern "C" int tsr_gloo_reduce(tsr_gloo_t *g, const void *send, void *recv, size_t count,
                               tessera_comm_type_t type, tessera_reduce_t op, int root, char *why,
                               size_t len) {
  std::lock_guard<std::mutex> hold(g->lock);
  return guarded("A reduce", why, len, [&] {
    typed(type, [&](auto *t) {
      using T = std::remove_pointer_t<decltype(t)>;
      // Gloo's ring writes partial results on every process: scratch where the caller's recv
      // is not the result's (every process but the root)
      std::vector<T> scratch(g->context->rank == root ? 0 : count);
      T *out = g->context->rank == root ? static_cast<T *>(recv) : scratch.data();
      gloo::ReduceOptions o(g->context);
      if (send != out) o.setInput(static_cast<T *>(const_cast<void *>(send)), count);
      o.setOutput(out, count);
      o.setRoot(root);
      o.setReduceFunction(reduction<T>(op));
      gloo::reduce(o);
    });
  });
}

extern "C" int tsr_gloo_allgather(tsr_gloo_t *g, const void *send, void *recv, size_t bytes,
                                  char *why, size_t len) {
  std::lock_guard<std::mutex> hold(g->lock);
  return guarded("An all-gather", why, len, [&] {
    gloo::AllgatherOptions o(g->context);
    o.setInput(static_cast<char *>(const_cast<void *>(send)), bytes);
    o.setOutput(static_cast<char *>(recv), bytes * g->context->size);
    gloo::allgather(o);
  });
}

extern "C" int tsr_gloo_barrier(tsr_gloo_t *g, char *why, size_t len) {
  std::lock_guard<std::mutex> hold(g->lock);
  return guarded("A barrier", why, len, [&] {
    gloo::BarrierOptions o(g->context);
    gloo::barrier(o);
  });
}

extern "C" int tsr_gloo_sendrecv(tsr_gloo_t *g, bool receive, void *buf, size_t bytes, int peer,
                                 uint64_t slot, char *why, size_t len) {
  std::lock_guard<std::mutex> hold(g->lock);
  return guarded(receive ? "A receive" : "A send", why, len, [&] {
    auto b = g->context->createUnboundBuffer(buf, bytes);
    if (receive) {
      b->recv(peer, slot);
      b->waitRecv(g->timeout);
    } else {
      b->send(peer, slot);
      b->waitSend(g->timeout);
    }
  });
}

extern "C" int tsr_gloo_post(tsr_gloo_t *g, bool receive, void *buf, size_t bytes, int peer,
                             uint64_t slot, tsr_gloo_xfer_t **out, char *why, size_t len) {
  *out = nullptr;
  std::unique_ptr<tsr_gloo_xfer_t> x;
  std::lock_guard<std::mutex> hold(g->lock);
  const int rc = guarded(receive ? "Posting a receive" : "Posting a send", why, len, [&] {
    x = std::make_unique<tsr_gloo_xfer_t>();
    x->buf = std::make_unique<Transfer>(g->context->tcp(), buf, bytes, receive);
    if (receive)
      x->buf->recv(peer, slot, 0, bytes);
    else
      x->buf->send(peer, slot, 0, bytes);
  });
  if (rc == 0) *out = x.release();
  return rc;
}

extern "C" int tsr_gloo_test(tsr_gloo_xfer_t *x, char *why, size_t len) {
  std::string what;
  const int done = x->buf->poll(&what);
  if (done >= 0) return done;
  return say(TESSERA_ERR_BACKEND, why, len, "A transfer failed in Gloo: " + what.substr(0, 160));
}

extern "C" void tsr_gloo_xfer_free(tsr_gloo_xfer_t *x) {
  delete x;
}

extern "C" void tsr_gloo_version(char *buf, size_t len) {
  std::snprintf(buf, len, "Gloo %d.%d.%d (TCP, over a key-value store)", GLOO_VERSION_MAJOR,
                GLOO_VERSION_MINOR, GLOO_VERSION_PATCH);
}
