// A module's code that reaches up to sim: util may not, sim's own layer may. layers_test.sh
// compiles it against util's include tree (the #include fails) and, with UPWARD_CALL_ONLY, links
// the call against util's layer library (the call fails) and against sim's (it links).
#include <string>
#include <vector>
#ifndef UPWARD_CALL_ONLY
#include "powershape/sim/profile.hpp"
#else
namespace powershape::sim {
std::vector<std::string> profile_names();
}
#endif

std::size_t how_many_profiles() { return powershape::sim::profile_names().size(); }
