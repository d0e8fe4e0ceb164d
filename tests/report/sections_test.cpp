#include "powershape/report/sections.hpp"

#include <gtest/gtest.h>

#include "powershape/util/error.hpp"

namespace powershape::report {
namespace {

const std::string kTrace = std::string(POWERSHAPE_DATA) + "/h200/gemm_sustained_trace.csv";

std::map<std::string, std::pair<double, std::string>> no_limits(const trace::Trace&) { return {}; }

// A trace alone: digested a row at a time, its swing section derived, its file's name the title;
// read whole where asked.
TEST(Sections, ATraceGivesItsDigestSwingAndTitle) {
  const ReportInputs in = read_inputs({kTrace, "", "", "", "", ""}, no_limits, nullptr);
  ASSERT_TRUE(in.digest.has_value());
  EXPECT_TRUE(in.swing.has_value());
  EXPECT_EQ(in.title, "powershape report: gemm_sustained_trace.csv");
  std::optional<trace::Trace> whole;
  read_inputs({kTrace, "", "", "", "", "mine"}, no_limits, &whole);
  ASSERT_TRUE(whole.has_value());
  EXPECT_FALSE(whole->samples.empty());
}

// A summary, or a Perfetto trace, without the trace they come from is refused, naming which.
TEST(Sections, WhatNeedsATraceIsRefusedWithoutOne) {
  const auto subject = [](const ReportFiles& f, bool whole) {
    std::optional<trace::Trace> t;
    try {
      read_inputs(f, no_limits, whole ? &t : nullptr);
    } catch (const Error& e) {
      return e.subject();
    }
    return std::string("none");
  };
  EXPECT_EQ(subject({"", "run.json", "", "", "", ""}, false), "json");
  EXPECT_EQ(subject({"", "", "", "", "swing.json", ""}, true), "perfetto");
}

}  // namespace
}  // namespace powershape::report
