// The catalogue of broken configurations in tests/control/configs: each file states the problems
// it must produce in trailing comments, and this test loads it and compares every diagnostic
// (location, key path, problem class, message) with those statements, both ways.
//
//   # set: KEY.PATH=VALUE              an override applied before checking
//   # expect: LINE:COL PATH CLASS: TEXT  an error at LINE:COL (or "set" for an override, "-" for
//                                      none) on PATH ("-" for none) whose message contains TEXT
//   # warn: ...                        the same for a warning
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "control/resolve/config_loader.h"
#include "tests/testing/test_paths.h"

namespace etwire::control {

using namespace etwire::config;
namespace {

namespace fs = std::filesystem;

struct Expected {
  Severity severity = Severity::kError;
  std::string location;  // "12:5", "set" or "-"
  std::string key_path;  // "-" for none
  std::string problem;
  std::string text;
  std::string source_line;
};

struct Case {
  fs::path file;
  std::vector<std::string> overrides;
  std::vector<Expected> expected;
};

fs::path catalogue_dir() {
  return etwire::testing::source_dir() / "tests/control/configs";
}

std::optional<Expected> parse_expectation(const std::string& line, const std::string& tag,
                                          Severity severity) {
  if (line.rfind(tag, 0) != 0) return std::nullopt;
  std::istringstream in(line.substr(tag.size()));
  Expected e;
  e.severity = severity;
  e.source_line = line;
  in >> e.location >> e.key_path >> e.problem;
  if (e.problem.empty() || e.problem.back() != ':') return std::nullopt;
  e.problem.pop_back();
  std::getline(in >> std::ws, e.text);
  return e;
}

Case read_case(const fs::path& file) {
  Case c;
  c.file = file;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("# set: ", 0) == 0) c.overrides.push_back(line.substr(7));
    if (auto e = parse_expectation(line, "# expect: ", Severity::kError)) c.expected.push_back(*e);
    if (auto e = parse_expectation(line, "# warn: ", Severity::kWarning)) c.expected.push_back(*e);
  }
  return c;
}

std::vector<fs::path> catalogue_files() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(catalogue_dir())) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string location_of(const Diagnostic& d) {
  if (d.where.from_override()) return "set";
  if (d.where.line == 0) return "-";
  return std::to_string(d.where.line) + ":" + std::to_string(d.where.column);
}

bool matches(const Expected& e, const Diagnostic& d) {
  return e.severity == d.severity && e.location == location_of(d) &&
         e.key_path == (d.key_path.empty() ? "-" : d.key_path) &&
         e.problem == problem_name(d.problem) && d.message.find(e.text) != std::string::npos;
}

class BrokenConfig : public ::testing::TestWithParam<fs::path> {};

TEST_P(BrokenConfig, ReportsExactlyWhatItStates) {
  Case c = read_case(GetParam());
  ASSERT_FALSE(c.expected.empty()) << c.file << " states no expected problem";
  LoadOptions options;
  options.overrides = c.overrides;
  RunPlan loaded = load_config_file(c.file.string(), options);
  std::vector<bool> used(loaded.diagnostics.items().size(), false);
  for (const auto& e : c.expected) {
    bool found = false;
    for (size_t i = 0; i < used.size() && !found; ++i) {
      if (!used[i] && matches(e, loaded.diagnostics.items()[i])) used[i] = found = true;
    }
    EXPECT_TRUE(found) << "not reported: " << e.source_line << "\nreported:\n"
                       << loaded.diagnostics.to_text();
  }
  for (size_t i = 0; i < used.size(); ++i) {
    EXPECT_TRUE(used[i]) << "reported but not stated in " << c.file.filename() << ": "
                         << format_diagnostic(loaded.diagnostics.items()[i]);
  }
  EXPECT_FALSE(loaded.ok());
}

INSTANTIATE_TEST_SUITE_P(Catalogue, BrokenConfig, ::testing::ValuesIn(catalogue_files()),
                         [](const ::testing::TestParamInfo<fs::path>& info) {
                           std::string name = info.param.stem().string();
                           for (char& ch : name) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return name;
                         });

// Every class of problem has at least one case in the catalogue.
TEST(BrokenConfigCatalogue, CoversEveryProblemClass) {
  std::set<std::string> covered;
  for (const auto& file : catalogue_files()) {
    for (const auto& e : read_case(file).expected) covered.insert(e.problem);
  }
  for (Problem p :
       {Problem::kSyntax, Problem::kWrongType, Problem::kUnknownKey, Problem::kOutOfRange,
        Problem::kBadValue, Problem::kMissing, Problem::kDuplicate, Problem::kBadReference,
        Problem::kInconsistent, Problem::kBackend, Problem::kTraceMismatch, Problem::kTrace,
        Problem::kBadOverride}) {
    EXPECT_EQ(covered.count(std::string(problem_name(p))), 1u) << problem_name(p);
  }
}

}  // namespace
}  // namespace etwire::control
