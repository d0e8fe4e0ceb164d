#include "powershape/report/html_report.hpp"

#include <gtest/gtest.h>

#include "error_of.hpp"

namespace powershape::report {
namespace {
using telemetry::Reading;
using telemetry::Signal;

trace::Trace two_gpus() {
  trace::Trace t;
  t.source = "test";
  for (int g = 0; g < 2; ++g) {
    trace::DeviceInfo d;
    d.index = g;
    d.name = "GPU" + std::to_string(g);
    d.power_limit_mw = Reading::of(700'000);
    t.devices.push_back(d);
    for (int i = 0; i < 100; ++i) {
      trace::Sample s;
      s.gpu = g;
      s.t_ns = 1'000'000'000 + i * 10'000'000LL;
      s[Signal::kPowerInstant] = Reading::of(i < 50 ? 100'000 : 700'000);
      s[Signal::kSmClock] = Reading::of(1980);
      s[Signal::kReasons] = Reading::of(i < 50 ? 0 : 4);
      t.samples.push_back(s);
    }
  }
  t.regions.push_back({"step </script><b>", -1, 1'200'000'000, 1'500'000'000});
  return t;
}

std::vector<std::string> names(const nlohmann::json& list, const char* key) {
  std::vector<std::string> out;
  for (const auto& x : list) out.push_back(x.at(key).get<std::string>());
  return out;
}

TEST(HtmlReport, EachGpuGetsTheSignalsItHasAndTheReasonsThatWereSet) {
  ReportInputs in;
  in.trace = two_gpus();
  const auto d = report_data(in);
  ASSERT_EQ(d["gpus"].size(), 2u);
  const auto& g = d["gpus"][1];
  EXPECT_EQ(g["index"], 1);
  EXPECT_EQ(g["power_limit_w"], 700.0);
  EXPECT_EQ(names(g["series"], "name"), (std::vector<std::string>{"instantaneous", "SM clock"}));
  EXPECT_EQ(names(g["reasons"], "name"), (std::vector<std::string>{"sw_power_cap"}));
  // Times are from the trace's start: the region 0.2 s in.
  EXPECT_NEAR(d["regions"][0]["begin_s"].get<double>(), 0.2, 1e-9);
  // Computed summaries: the whole trace and the region, per GPU.
  EXPECT_EQ(d["summary"].size(), 4u);
}

TEST(HtmlReport, ASeriesKeepsItsColourWhateverElseTheRecordingHas) {
  ReportInputs in;
  in.trace = two_gpus();
  const int alone = report_data(in)["gpus"][0]["series"][1]["color_index"];  // SM clock
  for (auto& s : in.trace->samples) s[Signal::kPowerUsage] = Reading::of(300'000);
  const nlohmann::json series = report_data(in)["gpus"][0]["series"];
  ASSERT_EQ(series.size(), 3u);
  EXPECT_EQ(series[2]["name"], "SM clock");
  EXPECT_EQ(series[2]["color_index"], alone);
}

TEST(HtmlReport, ARecordingWithoutALimitTakesItsProfilesAndSaysSo) {
  ReportInputs in;
  in.trace = two_gpus();
  in.trace->devices[0].power_limit_mw = Reading{};
  in.profile_limits["GPU0"] = {700, "h200"};
  const auto d = report_data(in);
  EXPECT_EQ(d["gpus"][0]["power_limit_w"], 700.0);
  EXPECT_EQ(d["gpus"][0]["power_limit_from"], "h200");
  EXPECT_EQ(d["gpus"][1]["power_limit_from"], "");  // its own
}

TEST(HtmlReport, TheVerdictSaysWhatSetEachGpusSpeed) {
  ReportInputs in;
  in.trace = two_gpus();
  in.trace->devices[0].max_sm_clock_mhz = Reading::of(1980);
  const std::string v = report_data(in)["verdict"];
  // Half the samples carry the SW power cap (49 of the 99 intervals): the limit set the speed.
  EXPECT_NE(v.find("GPU 0 held its power limit 49% of the time, its SM clock at 1980 MHz on "
                   "average against 1980 MHz"),
            std::string::npos)
      << v;
  EXPECT_NE(v.find("GPU 1 held its power limit 49%"), std::string::npos) << v;
  const auto row = [](double capped, double thermal) {
    return nlohmann::json::array({{{"name", "all"},
                                   {"gpu", 0},
                                   {"power_capped_fraction", capped},
                                   {"thermal_fraction", thermal}}});
  };
  EXPECT_NE(verdict(row(0.01, 0.3), {}).find("held back by heat 30%"), std::string::npos);
  EXPECT_NE(verdict(row(0, 0), {}).find("never held back"), std::string::npos);
  EXPECT_NE(verdict(row(0.1, 0.01), {}).find("10% of the time at most"), std::string::npos);
  EXPECT_NE(
      verdict(nlohmann::json::array({{{"name", "all"}, {"gpu", 3}}}), {}).find("cannot be said"),
      std::string::npos);
  EXPECT_EQ(verdict(nlohmann::json::array(), {}), "");
}

TEST(HtmlReport, ABinIsNeverFinerThanTheRowsNeed) {
  ReportInputs in;
  in.trace = two_gpus();
  const auto d = report_data(in, 100);
  EXPECT_LE(d["gpus"][0]["bins"].get<std::size_t>(), 100u);
  // 0.99 s over at most 100 bins: each bin is 10 ms or wider.
  EXPECT_GE(d["gpus"][0]["bin_s"].get<double>(), 0.0099);
}

TEST(HtmlReport, ThePageCarriesTheDataWithoutClosingItsScript) {
  ReportInputs in;
  in.trace = two_gpus();
  const std::string page = render_page(report_data(in));
  EXPECT_EQ(page.find("/*POWERSHAPE_DATA*/"), std::string::npos);
  EXPECT_NE(page.find("step \\u003c/script>\\u003cb>"), std::string::npos);  // every '<' escaped
  // One </script> for each of the page's two script elements, none from the data.
  std::size_t n = 0;
  for (auto at = page.find("</script>"); at != std::string::npos;
       at = page.find("</script>", at + 1))
    ++n;
  EXPECT_EQ(n, 2u);
  EXPECT_EQ(page.find("http://"), std::string::npos);  // nothing fetched: it opens offline
  EXPECT_EQ(page.find("https://"), std::string::npos);
}

TEST(HtmlReport, BadInputsAreNamed) {
  EXPECT_EQ(testing::error_of([] { report_data({}); }),
            "nothing to report: no trace, probe, repro or swing result");
  ReportInputs empty_trace;
  empty_trace.trace = trace::Trace{};
  EXPECT_EQ(testing::error_of([&] { report_data(empty_trace); }), "the trace has no samples");
  ReportInputs probe;
  probe.probe = nlohmann::json{{"points", nlohmann::json::array()}};
  EXPECT_EQ(testing::error_of([&] { report_data(probe); }),
            "probe: no 'boost_tflops' (not a probe file?)");
  ReportInputs repro;
  repro.repro = nlohmann::json{{"configs", {{{"ratio", 1}}}}};
  EXPECT_EQ(testing::error_of([&] { report_data(repro); }), "repro: no 'name' (not a repro file?)");
}

TEST(HtmlReport, ReproDropsTheRawMeasurements) {
  ReportInputs in;
  in.repro = nlohmann::json{{"configs", {{{"name", "a"}}}}, {"measurements", {1, 2, 3}}};
  const auto d = report_data(in);
  EXPECT_FALSE(d["repro"].contains("measurements"));
  EXPECT_TRUE(d["gpus"].empty());
}

}  // namespace
}  // namespace powershape::report
