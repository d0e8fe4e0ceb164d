#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>

#include "error_of.hpp"
#include "powershape/trace/csv_reader.hpp"
#include "powershape/trace/csv_writer.hpp"

namespace powershape::trace {
namespace {
using telemetry::Reading;
using telemetry::Signal;
using telemetry::Status;

Trace example() {
  Trace t;
  t.source = "nvml";
  DeviceInfo d;
  d.index = 3;
  d.name = "NVIDIA H200, \"SXM\"";  // commas and quotes survive
  d.uuid = "GPU-1";
  d.power_limit_mw = Reading::of(700000);
  d.temp_gpu_max_c = Reading::failed(Status::kNotSupported);
  d.support.fill(Status::kOk);
  d.support[static_cast<std::size_t>(Signal::kMemTemp)] = Status::kNotSupported;
  t.devices.push_back(d);
  for (int i = 0; i < 3; ++i) {
    Sample s;
    s.t_ns = 1000 + i;
    s[Signal::kPowerUsage] = Reading::of(100000 + i);
    s[Signal::kEnergy] = Reading::of(int64_t{1} << 50);
    s[Signal::kSmClock] = Reading::failed(i == 1 ? Status::kGpuLost : Status::kError);
    s[Signal::kMemTemp] = Reading::failed(Status::kNotSupported);
    t.samples.push_back(s);
  }
  Sample driver;
  driver.t_ns = 990;
  driver[Signal::kDriverPower] = Reading::of(123);
  t.samples.push_back(driver);
  t.regions.push_back({"step, 1", -1, 1000, 1002});
  t.events.push_back({1001, 0, "sm_clock: [Error]"});
  return t;
}

// What a file keeps of a trace: a reading that failed is an empty cell, read back as not taken
// (the device lines and events say why).
Trace as_written(Trace t) {
  for (auto& s : t.samples) {
    for (auto& r : s.readings) {
      if (!r.ok()) r = Reading{};
    }
  }
  return t;
}

std::vector<std::string> lines_of(const std::string& path) {
  std::vector<std::string> out;
  std::FILE* f = std::fopen(path.c_str(), "r");
  char line[8192];
  while (f != nullptr && std::fgets(line, sizeof line, f) != nullptr) out.emplace_back(line);
  if (f != nullptr) std::fclose(f);
  return out;
}

std::size_t data_rows(const std::string& path) {
  std::size_t n = 0;
  for (const auto& l : lines_of(path)) n += l[0] != '#';
  return n - 1;  // the header
}

Sample poll(int64_t t_ns, int64_t power_mw) {
  Sample s;
  s.t_ns = t_ns;
  s[Signal::kPowerUsage] = Reading::of(power_mw);
  s[Signal::kSmClock] = Reading::of(1980);
  return s;
}

std::string temp_path(const char* name) { return ::testing::TempDir() + "/" + name; }

Trace parse(const std::string& text) {
  std::istringstream in(text);
  return read_csv(in, "x.csv");
}

std::string error_of(const std::string& text) {
  return testing::error_of([&] { parse(text); });
}

}  // namespace

TEST(Csv, RoundTripsAWholeTrace) {
  Trace t = example();
  std::string path = temp_path("round.csv");
  write_csv(path, t);
  EXPECT_EQ(read_csv(path), as_written(t));
}

// A file saved with CR line ends alone (old Mac tools) reads as the LF original does.
TEST(Csv, CrLineEndsReadAsLf) {
  Trace t = example();
  std::string path = temp_path("cr.csv");
  write_csv(path, t);
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string cr = text;
  std::replace(cr.begin(), cr.end(), '\n', '\r');
  EXPECT_EQ(parse(cr), parse(text));
  EXPECT_EQ(parse(cr).samples.size(), as_written(t).samples.size());
}

TEST(Csv, ColumnsAreNamedOneWayAndEveryCellIsANumberOrEmpty) {
  std::string path = temp_path("units.csv");
  write_csv(path, example());
  std::string header;
  for (const auto& l : lines_of(path)) {
    if (l[0] == '#') continue;
    if (header.empty()) {
      header = l;
      continue;
    }
    // What pandas needs to read every column as numbers: digits, a sign, or nothing.
    for (char c : l)
      EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(c)) || c == ',' || c == '-' || c == '\n')
          << l;
  }
  EXPECT_EQ(header.rfind("t_ns,gpu,power_usage_mw,power_instant_mw", 0), 0u) << header;
  EXPECT_NE(header.find(",energy_mj,"), std::string::npos);
  EXPECT_NE(header.find(",sm_clock_mhz,"), std::string::npos);
  EXPECT_NE(header.find(",clock_event_reasons,"), std::string::npos);
  EXPECT_NE(header.find(",util_gpu_pct"), std::string::npos);
}

TEST(Csv, ReadsTheFirstVersionsColumnNames) {
  Trace t = parse(
      "t [ns],gpu,power_instant [mW],sm_clock [MHz],mem_temp [C]\n5,0,7,1980,[Not Supported]\n");
  ASSERT_EQ(t.samples.size(), 1u);
  EXPECT_EQ(t.samples[0][Signal::kPowerInstant], Reading::of(7));
  EXPECT_EQ(t.samples[0][Signal::kMemTemp].status, Status::kNotSupported);
}

// A recording made before power smoothing's signals existed reads, those signals unsupported.
TEST(Csv, ATraceFromBeforeASignalExistedReadsWithItUnsupported) {
  Trace t = read_csv(POWERSHAPE_DATA "/h200/record/trace.csv");
  ASSERT_FALSE(t.devices.empty());
  EXPECT_EQ(t.devices[0].support[static_cast<std::size_t>(Signal::kSmoothingFloor)],
            Status::kNotSupported);
  EXPECT_EQ(t.devices[0].support[static_cast<std::size_t>(Signal::kPowerInstant)], Status::kOk);
}

TEST(Csv, RepeatedPollsAreLeftOutWithoutChangingWhatTheyHold) {
  Trace t;
  t.source = "x";
  for (int i = 0; i < 10; ++i) t.samples.push_back(poll(i * 10'000'000, i < 6 ? 100 : 200));
  Sample driver;  // the driver's buffer rows are kept however alike
  driver.t_ns = 15'000'000;
  driver[Signal::kDriverPower] = Reading::of(100);
  t.samples.push_back(driver);
  t.samples.push_back(driver);
  const std::string lean = temp_path("lean.csv"), full = temp_path("full.csv");
  write_csv(lean, t);
  write_csv(full, t, /*every_row=*/true);
  EXPECT_EQ(data_rows(full), 12u);
  // The first of each run, the last row of the trace, both driver rows.
  EXPECT_EQ(data_rows(lean), 5u);
  Trace back = read_csv(lean);
  EXPECT_EQ(back.samples.back().t_ns, 90'000'000);  // the trace still ends where it ended
  EXPECT_EQ(read_csv(full), t);
}

TEST(Csv, ARepeatIsStillWrittenOnceASecond) {
  Trace t;
  for (int i = 0; i <= 30; ++i) t.samples.push_back(poll(i * 100'000'000LL, 100));
  const std::string path = temp_path("second.csv");
  write_csv(path, t);
  // 0, 1.0, 2.0, 3.0 s: one a second, the last one among them.
  EXPECT_EQ(data_rows(path), 4u);
}

TEST(Csv, ADeviceFigureNotAvailableIsNullWithItsReason) {
  const std::string path = temp_path("device.csv");
  write_csv(path, example());
  std::string device;
  for (const auto& l : lines_of(path)) {
    if (l.rfind("# device ", 0) == 0) device = l;
  }
  EXPECT_NE(device.find("\"temp_gpu_max_c\":null"), std::string::npos) << device;
  EXPECT_NE(device.find("\"unavailable\":{\"temp_gpu_max_c\":\"[Not Supported]\"}"),
            std::string::npos)
      << device;
  EXPECT_EQ(read_csv(path).devices, example().devices);
}

TEST(Csv, ReadsTheH200ResearchFormatWithConditionsAsRegions) {
  Trace t = read_csv(POWERSHAPE_DATA "/h200/square_wave_idle_trace.csv");
  ASSERT_GT(t.samples.size(), 10000u);
  EXPECT_EQ(t.samples[0][Signal::kPowerInstant], Reading::of(79153));
  EXPECT_EQ(t.samples[0][Signal::kSmClock], Reading::of(345));
  EXPECT_EQ(t.samples[0].t_ns, 28926171000);
  EXPECT_EQ(t.samples[0][Signal::kPowerUsage].status, Status::kNotRead);
  std::vector<std::string> names;
  for (const auto& r : t.regions) names.push_back(r.name);
  EXPECT_NE(std::find(names.begin(), names.end(), "sq_idle_50ms"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "gemm_only"), names.end());
}

TEST(Csv, MalformedFilesNameTheFileLineAndColumn) {
  EXPECT_EQ(error_of("t,p_mw\n0.5,12x\n"), "x.csv:2:5: expected an integer, found '12x'");
  EXPECT_EQ(error_of("t,watts\n"), "x.csv:1:3: unknown column 'watts'");
  EXPECT_EQ(error_of("t,p_mw\n0.5\n"), "x.csv:2: expected 2 cells, found 1");
  EXPECT_EQ(error_of("p_mw\n5\n"), "x.csv:1:1: no time column (t_ns, t_ms or t_s)");
  EXPECT_EQ(error_of(""), "x.csv:0: no header row");
  EXPECT_EQ(error_of("t,p_mw\n1e300,5\n"), "x.csv:2:1: value out of range");
  EXPECT_EQ(error_of("# region {\"name\":\"r\"}\nt\n"),
            "x.csv:1:10: bad region line: missing key 'gpu'");
  EXPECT_EQ(error_of("t,p_mw\n1,[Bogus]\n"), "x.csv:2:3: expected an integer, found '[Bogus]'");
  // A number no int holds (the fuzzer's 1.1e73) is refused, not cast.
  EXPECT_EQ(error_of("# device {\"index\":1.1e73}\nt\n"),
            "x.csv:1:10: bad device line: key 'index': expected an integer");
  EXPECT_EQ(error_of("# region {\"name\":\"r\",\"gpu\":0,\"begin_ns\":1e30,\"end_ns\":2}\nt\n"),
            "x.csv:1:10: bad region line: key 'begin_ns': expected an integer");
  // One int64 holds, but not its distance from a reading: refused, not overflowed later.
  EXPECT_EQ(error_of("# region {\"name\":\"r\",\"gpu\":0,\"begin_ns\":-9223372036854775808,"
                     "\"end_ns\":2}\nt\n"),
            "x.csv:1:10: bad region line: region 'r': a time beyond 2^62 ns (146 years)");
  EXPECT_EQ(error_of("# clock {\"wall_minus_steady_ns\":1e300}\nt\n"),
            "x.csv:1:9: bad clock line: wall_minus_steady_ns: expected an integer");
}

TEST(Csv, TheWriterStreamsAndFlushes) {
  std::string path = temp_path("stream.csv");
  CsvWriter w(path);
  Trace t = example();
  w.header(t.source, t.devices);
  w.samples({t.samples[0]});
  // Read back while the writer is still open: what was written is on disk.
  Trace partial = read_csv(path);
  ASSERT_EQ(partial.samples.size(), 1u);
  EXPECT_EQ(partial.samples[0], as_written(t).samples[0]);
}

TEST(Csv, AnUnwritablePathIsAClearError) {
  EXPECT_THROW(CsvWriter("/nonexistent-dir/x.csv"), std::runtime_error);
}

}  // namespace powershape::trace

namespace powershape::trace {

TEST(Csv, ATornLastLineIsDroppedWithAnEventABomSkippedAFolderRefused) {
  std::istringstream torn("t,p_mw,sm_mhz\n0.0,100000,1980\n0.1,200000,1980\n0.2,30");
  Trace t = read_csv(torn, "torn.csv");
  ASSERT_EQ(t.samples.size(), 2u);
  ASSERT_EQ(t.events.size(), 1u);
  EXPECT_EQ(t.events[0].what.rfind(kTornPrefix, 0), 0u);
  EXPECT_NE(t.events[0].what.find("torn.csv:4"), std::string::npos) << t.events[0].what;
  // The same row inside the file, with its newline, is an error.
  std::istringstream inside("t,p_mw,sm_mhz\n0.0,100000,1980\n0.2,30\n0.3,100000,1980\n");
  EXPECT_THROW(read_csv(inside, "inside.csv"), std::runtime_error);
  std::istringstream bom("\xEF\xBB\xBFt,p_mw,sm_mhz\n0.0,100000,1980\n");
  EXPECT_EQ(read_csv(bom, "bom.csv").samples.size(), 1u);
  try {
    read_csv(std::string(POWERSHAPE_DATA));
    ADD_FAILURE() << "a folder was read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("a folder, not a trace file"), std::string::npos)
        << e.what();
  }
}

}  // namespace powershape::trace

namespace powershape::trace {

// Values a recording cannot hold are refused by line and column; a GPU index that does not fit
// an int is not wrapped into a small one.
TEST(Csv, NegativePowerAndGpuIndicesThatDoNotFitAreRefused) {
  EXPECT_EQ(error_of("t,p_mw\n0.5,-5\n"), "x.csv:2:5: negative power_usage -5");
  EXPECT_EQ(error_of("t,energy_mj\n0.5,-1\n"), "x.csv:2:5: negative energy -1");
  EXPECT_EQ(error_of("t,gpu,p_mw\n0.5,4294967296,5\n"),
            "x.csv:2:5: gpu index 4294967296 is outside 0-1023");
  EXPECT_EQ(error_of("t,gpu,p_mw\n0.5,-1,5\n"), "x.csv:2:5: gpu index -1 is outside 0-1023");
  std::istringstream cold("t,temp_c\n0.5,-12\n");  // a temperature may be below zero
  EXPECT_EQ(read_csv(cold, "cold.csv").samples[0][Signal::kGpuTemp].value, -12);
}

// A reading no GPU gives (9.2e15 W, 20 GHz, 300 C, 150% busy) is left out as an error reading,
// said once in an event with the count and the first, not believed by report and advise; the
// largest real ones read, and the rest of the recording with them.
TEST(Csv, ReadingsNoGpuGivesAreLeftOutAndSaid) {
  const Trace t = parse(
      "t,p_mw,sm_mhz,temp_c,util_gpu_pct\n0.5,9200000000000000000,20000,300,150\n"
      "0.6,1200000,3500,110,100\n");
  for (const Signal sig :
       {Signal::kPowerUsage, Signal::kSmClock, Signal::kGpuTemp, Signal::kUtilGpu})
    EXPECT_FALSE(t.samples[0][sig].ok()) << telemetry::column_name(sig);
  EXPECT_EQ(t.samples[1][Signal::kPowerUsage].value, 1'200'000);
  EXPECT_EQ(t.samples[1][Signal::kSmClock].value, 3500);
  ASSERT_EQ(t.events.size(), 1u);
  EXPECT_EQ(
      t.events[0].what,
      "4 reading(s) beyond any GPU left out, the first power_usage_mw 9200000000000000000 (at "
      "most 10000000)");
}

// An energy counter that restarts mid-trace (a driver reload) continues from where it was, per
// GPU, with an event; energy over a window across the reset stays right.
TEST(Csv, AnEnergyCounterThatResetsIsUnwrappedPerGpu) {
  std::istringstream in(
      "t,gpu,energy_mj\n0.0,0,5000\n0.0,1,900\n1.0,0,6000\n1.0,1,1000\n2.0,0,200\n2.0,1,1100\n"
      "3.0,0,1200\n");
  Trace t = read_csv(in, "reset.csv");
  std::vector<int64_t> gpu0, gpu1;
  for (const auto& s : t.samples) (s.gpu == 0 ? gpu0 : gpu1).push_back(s[Signal::kEnergy].value);
  EXPECT_EQ(gpu0, (std::vector<int64_t>{5000, 6000, 6200, 7200}));
  EXPECT_EQ(gpu1, (std::vector<int64_t>{900, 1000, 1100}));
  ASSERT_EQ(t.events.size(), 1u);
  EXPECT_EQ(t.events[0].gpu, 0);
  EXPECT_EQ(t.events[0].t_ns, 2'000'000'000);
  EXPECT_NE(t.events[0].what.find("went back"), std::string::npos);
}

// An energy counter that leaps ahead faster than any GPU draws (a glitch, a corrupt cell) would
// give report and advise a power of petawatts: the leap is not counted, with an event, and the
// counter goes on from its new value.
TEST(Csv, AnEnergyCounterThatLeapsIsNotBelieved) {
  std::istringstream in(
      "t,energy_mj\n0.0,1000\n1.0,2000\n1.01,1152921504606848000\n2.0,1152921504606849000\n");
  Trace t = read_csv(in, "leap.csv");
  std::vector<int64_t> e;
  for (const auto& s : t.samples) e.push_back(s[Signal::kEnergy].value);
  EXPECT_EQ(e, (std::vector<int64_t>{1000, 2000, 2000, 3000}));
  ASSERT_EQ(t.events.size(), 1u);
  EXPECT_EQ(t.events[0].t_ns, 1'010'000'000);
  EXPECT_NE(t.events[0].what.find("energy counter leapt 1152921504606846000 mJ"), std::string::npos)
      << t.events[0].what;
}

// A bitmask is any 64 bits: the top one set reads as a negative integer, and a trace written with
// it reads back.
TEST(Csv, AReasonsBitmaskWithItsTopBitSetReadsBack) {
  std::istringstream in("t_s,clock_event_reasons\n0.0,-9223372036854775807\n");
  const Trace t = read_csv(in, "top.csv");
  ASSERT_EQ(t.samples.size(), 1u);
  EXPECT_EQ(static_cast<uint64_t>(t.samples[0][Signal::kReasons].value), 0x8000000000000001u);
}

}  // namespace powershape::trace
