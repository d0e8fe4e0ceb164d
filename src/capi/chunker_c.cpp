// The online chunker half of the C API (include/powershape/powershape.h) over
// experiment::AdaptiveChunker.
#include <stdexcept>

#include "capi_error.hpp"
#include "powershape/experiment/adaptive_chunker.hpp"
#include "powershape/powershape.h"

struct ps_chunker {
  powershape::experiment::AdaptiveChunker impl;
};

extern "C" {

ps_chunker* ps_chunker_open(const int* arms, int n_arms, const char* objective, double p_max_w) {
  return powershape::capi::guarded<ps_chunker*>(nullptr, [&] {
    namespace e = powershape::experiment;
    e::ChunkerOptions o;
    if (arms != nullptr) {
      if (n_arms < 1 || n_arms > 64)
        throw powershape::invalid_input("chunker: 1 to 64 chunk counts");
      o.arms.assign(arms, arms + n_arms);
    }
    o.objective = e::parse_objective(objective != nullptr ? objective : "time", p_max_w);
    return new ps_chunker{e::AdaptiveChunker(o)};
  });
}

int ps_chunker_next(const ps_chunker* c) { return c != nullptr ? c->impl.next() : -1; }

int ps_chunker_report(ps_chunker* c, int chunks, double ms, double joules) {
  return powershape::capi::guarded<int>(-1, [&] {
    if (c == nullptr) throw powershape::invalid_input("chunker: NULL");
    c->impl.report(chunks, ms, joules);
    return 0;
  });
}

int ps_chunker_best(const ps_chunker* c) { return c != nullptr ? c->impl.best() : -1; }
int ps_chunker_settled(const ps_chunker* c) { return c != nullptr && c->impl.settled() ? 1 : 0; }
void ps_chunker_close(ps_chunker* c) { delete c; }

}  // extern "C"
