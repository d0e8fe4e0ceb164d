#pragma once
#include <string>

namespace powershape::util {

// The folder that holds powershape's profiles/ and data/: $POWERSHAPE_SHARE when set; else
// share/powershape beside the running program's bin/ (an installed powershape, wherever it was
// installed); else the source tree it was built from; else the configured install prefix's.
std::string share_dir();

// powershape's version ("0.3.0").
const char* version();

}  // namespace powershape::util
