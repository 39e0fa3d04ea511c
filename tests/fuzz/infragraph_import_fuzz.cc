// An InfraGraph file read on its own, as `fabric.infragraph` names it: parsed as YAML or JSON,
// read against InfraGraph's schema, expanded into cables and its shape recognized. The
// `infragraph` target does the same inside a whole run configuration and then builds the twin
// from the shape; this one leaves the configuration and the twin out, which makes an execution
// several times cheaper, so that a campaign of millions reaches the reader's corners. Bad input
// is reported as diagnostics, never by throwing: any exception escaping is a finding.
#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "control/load/diagnostic.h"
#include "control/load/document_context.h"
#include "control/load/infragraph_import.h"
#include "control/load/map_reader.h"
#include "control/load/overrides.h"
#include "control/load/source_map.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace etwire;
  using namespace etwire::control;
  YAML::Node fabric(YAML::NodeType::Map);
  fabric["infragraph"] = fuzz::input_as_file(data, size);
  AppliedOverrides applied;
  SourceMap source_map("fuzz.yaml");
  Diagnostics diagnostics;
  DocumentContext ctx(applied, source_map, diagnostics);
  MapReader reader(ctx, fabric, "fabric");
  config::FabricConfig out;
  volatile bool imported = import_infragraph(reader, "/nonexistent/etwire-fuzz-infragraph", out);
  (void)imported;
  return 0;
}
