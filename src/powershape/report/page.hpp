#pragma once
#include <string_view>

namespace powershape::report {

// page.html, compiled in (CMake writes it into a generated source) so the binary alone can write
// a report; render_page() puts the data where the page has /*POWERSHAPE_DATA*/.
extern const std::string_view kPage;

}  // namespace powershape::report
