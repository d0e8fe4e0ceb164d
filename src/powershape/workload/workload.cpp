#include "powershape/workload/workload.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "powershape/util/error.hpp"

namespace powershape::workload {
namespace {

// The sizes of "AxBxC..." (three to eight), each from 1 to 10^9; false otherwise.
bool read_dims(const std::string& s, Sizes& d) {
  d.clear();
  std::size_t start = 0;
  while (d.size() < 8) {
    const auto x = s.find('x', start);
    const std::string item =
        s.substr(start, x == std::string::npos ? std::string::npos : x - start);
    if (item.empty() || item.size() > 10 ||
        item.find_first_not_of("0123456789") != std::string::npos)
      return false;
    d.push_back(std::stoll(item));
    if (d.back() < 1 || d.back() > 1'000'000'000) return false;
    if (x == std::string::npos) return d.size() >= 3;
    start = x + 1;
  }
  return false;
}

std::optional<NameParts> parts_of(const std::string& name) {
  std::istringstream in(name);
  NameParts p;
  if (!(in >> p.kind)) return std::nullopt;
  std::string word;
  bool sized = false;  // the words before the sizes, then the sizes, read once
  while (!sized && in >> word) {
    sized = read_dims(word, p.dims);
    if (!sized) p.words.push_back(word);
  }
  if (!sized || !(in >> word) || word.rfind("chunks=", 0) != 0) return std::nullopt;
  const std::string count = word.substr(7);
  if (count.empty() || count.size() > 5 ||
      count.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  p.chunks = std::atoi(count.c_str());
  if (p.chunks < 1 || p.chunks > 65536) return std::nullopt;
  while (in >> word) p.options.push_back(word);
  return p;
}

}  // namespace

std::string name_of(const Workload& w) {
  return std::visit(
      [&](const auto& k) -> std::string {
        if constexpr (std::is_same_v<std::decay_t<decltype(k)>, Custom>) {
          return "custom";
        } else {
          return k.name(w.chunks);
        }
      },
      w.kind);
}

std::string kind_name_of(const Workload& w) {
  std::string name = name_of(w);
  const std::string chunks = " chunks=" + std::to_string(w.chunks);
  if (const auto at = name.find(chunks); at != std::string::npos) name.erase(at, chunks.size());
  return name;
}

std::optional<Workload> workload_named(const std::string& name) {
  const auto p = parts_of(name);
  if (!p) return std::nullopt;
  std::optional<Workload> out;
  for_each_kind([&](auto k) {
    using K = decltype(k);
    if (out || p->kind != K::kName) return;
    if (auto found = K::from_name(*p)) {
      try {
        found->check(p->chunks);
      } catch (const Error&) {
        return;  // a name its kind cannot plan (more chunks than rows)
      }
      out = Workload{*found, p->chunks};
    }
  });
  return out;
}

std::vector<std::string> kind_names(bool chunked) {
  std::vector<std::string> out;
  for_each_kind([&](auto k) {
    using K = decltype(k);
    if ((chunked && !K::kChunked) || K::kShape == nullptr) return;
    if (std::find(out.begin(), out.end(), K::kName) == out.end()) out.push_back(K::kName);
  });
  return out;
}

std::string kind_list(bool chunked) {
  std::string out;
  for (const auto& k : kind_names(chunked)) out += (out.empty() ? "" : ", ") + k;
  return out;
}

std::string kind_shapes() {
  std::vector<std::string> seen;
  std::string out;
  for_each_kind([&](auto k) {
    using K = decltype(k);
    if constexpr (requires { K::kDefaultShape; }) {
      if (std::find(seen.begin(), seen.end(), K::kName) != seen.end()) return;
      seen.push_back(K::kName);
      std::string sizes;
      for (auto v : K::kDefaultShape) sizes += (sizes.empty() ? "" : ",") + std::to_string(v);
      out += (out.empty() ? "" : "; ") + std::string(K::kName) + ": " + K::kShape + " (default " +
             sizes + ")";
    }
  });
  return out;
}

}  // namespace powershape::workload
