// The run configuration's JSON Schema, for editors that check YAML against one
// (yaml-language-server: VS Code, Neovim, Helix ...). It is not written by hand: the section
// parsers say what they ask for while they read (SchemaRecorder), and configurations made up to
// reach every key they can ask for are read until no new key appears: an empty document, then one
// with an element in each list, each choice set to each of its names, each boolean both ways,
// each key read by hand given a section. So a key the loader reads is in the schema, with the
// range, units and names its reader accepts, and a key it does not know is refused.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace etwire::control {

// A JSON Schema (draft-07) for a run configuration; `version` is named in its description.
nlohmann::json config_json_schema(const std::string& version);

}  // namespace etwire::control
