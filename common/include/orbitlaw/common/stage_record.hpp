#pragma once
// A run folder is complete or visibly not. A stage's first act is to remove its completion record
// (STAGE.complete.json); its last is to write one listing every output with its size and checksum and the
// inputs it used. A reader of the folder (compare, report, a resumed run) checks the record, so a folder left
// by a killed run, or one whose outputs were replaced afterwards, is refused instead of silently mixed.
#include <cstdint>
#include <string>
#include <vector>

#include "orbitlaw/common/config.hpp"

namespace orbitlaw {

// 64-bit FNV-1a of a file's bytes, as 16 hex digits; throws Error when the file cannot be read.
std::string file_checksum(const std::string& path);

// Path of the completion record of `stage` in `dir`.
std::string stage_record_path(const std::string& dir, const std::string& stage);

// Removes the completion record, so that the folder reads as incomplete until complete_stage().
void begin_stage(const std::string& dir, const std::string& stage);

// Writes the completion record: each output (a file name inside `dir`) with its size and checksum, and
// `inputs` (e.g. the checkpoint used, with its checksum) as given.
void complete_stage(const std::string& dir, const std::string& stage, const std::vector<std::string>& outputs,
                    const Json& inputs = Json::object());

// Throws Error with one line when the record is missing or an output it lists is missing or changed.
// Returns the record.
Json require_complete_stage(const std::string& dir, const std::string& stage);

}  // namespace orbitlaw
