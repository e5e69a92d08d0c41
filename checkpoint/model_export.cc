#include "checkpoint/model_export.h"

#include <mpi.h>

#include <filesystem>
#include <system_error>
#include <utility>
#include <vector>

#include "checkpoint/directory.h"
#include "checkpoint/format.h"
#include "checkpoint/isolated_read.h"
#include "checkpoint/save.h"
#include "core/common/error.h"
#include "core/common/message_text.h"

namespace sluice::checkpoint {
namespace {

bool under(const std::string& path, const char* group) {
  const std::string prefix = std::string(group) + "/";
  return path.compare(0, prefix.size(), prefix) == 0;
}

// What an export keeps: the model, its normalization statistics, and application arrays when asked for.
bool kept(const Entry& entry, const ExportOptions& options) {
  if (under(entry.path, kModelGroup) || under(entry.path, kNormalizationGroup)) return true;
  return options.with_application_state && under(entry.path, kApplicationGroup);
}

// One application array of the file as an Entry (float32 values in data, any other type in bytes).
Entry application_entry(const Reader& reader, const std::string& path) {
  Entry entry;
  entry.path = path;
  entry.type = reader.application_type(path);
  entry.dims = reader.application_dims(path);
  size_t count = 1;
  for (int64_t d : entry.dims) count *= static_cast<size_t>(d);
  void* destination = nullptr;
  if (entry.type == DataType::kFloat32) {
    entry.data.resize(count);
    destination = entry.data.data();
  } else {
    entry.bytes.resize(count * data_type_size(entry.type));
    destination = entry.bytes.data();
  }
  reader.read_application(path, entry.type, destination, count);
  return entry;
}

// The file's content as a save() Snapshot, the datasets an export leaves out not even read.
Snapshot snapshot_of(const Reader& reader, const ExportOptions& options) {
  Snapshot snapshot;
  for (const std::string& path : reader.paths()) {
    if (under(path, kModelGroup) || under(path, kNormalizationGroup)) snapshot.entries.push_back(reader.read(path));
  }
  if (options.with_application_state) {
    for (const std::string& path : reader.application_paths()) {
      snapshot.entries.push_back(application_entry(reader, path));
    }
  }
  snapshot.train_ints = reader.train_ints();
  snapshot.attributes = reader.attributes();
  snapshot.attributes.erase(kFormatVersionAttribute);  // save() writes its own
  return snapshot;
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code error;
  return std::filesystem::exists(b, error) && std::filesystem::equivalent(a, b, error);
}

}  // namespace

void strip_to_model(Snapshot& snapshot, const ExportOptions& options) {
  std::vector<Entry> entries;
  for (Entry& entry : snapshot.entries) {
    if (kept(entry, options)) entries.push_back(std::move(entry));
  }
  snapshot.entries = std::move(entries);
  // The groups left empty say so in /train too: no samples held, saved at a step boundary.
  snapshot.train_ints[kSamplesHeldDataset] = 0;
  snapshot.train_ints[kSamplesDrawsDataset] = 0;
  snapshot.train_ints[kAccumulationPositionDataset] = 0;
  snapshot.train_ints.erase(kAccumulationCallSamplesDataset);
  snapshot.attributes[kExportAttribute] = kModelExportValue;
}

bool is_model_export(const Reader& reader) {
  const auto found = reader.attributes().find(kExportAttribute);
  return found != reader.attributes().end() && found->second == kModelExportValue;
}

void refuse_resume_from_export(const Reader& reader) {
  if (!is_model_export(reader)) return;
  throw Error(ErrorCode::kCheckpoint,
              "checkpoint '" + shorten_for_message(reader.file()) +
                  "' is a model-only export (sluice export / sluice_trainer_export): it holds no optimizer state "
                  "and no submitted samples, so a run cannot resume from it; resume from the full checkpoint it "
                  "was exported from, or load it with sluice_model_load for inference");
}

std::string export_model_file(const std::string& source, const std::string& out, const ExportOptions& options) {
  const std::string file = resolve_checkpoint_path(source);
  if (same_file(file, out)) {
    throw Error(ErrorCode::kInvalidArgument, "export: the output '" + shorten_for_message(out) +
                                                 "' is the checkpoint being exported; write the export elsewhere");
  }
  // The probe first: a crafted file that crashes libhdf5 crashes the probe, not this command.
  probe_checkpoint(file, IsolatedReads::kAuto);
  Snapshot snapshot;
  {
    const Reader reader(file);
    reader.verify_all();
    snapshot = snapshot_of(reader, options);
  }
  strip_to_model(snapshot, options);
  save(MPI_COMM_SELF, out, snapshot);
  return file;
}

}  // namespace sluice::checkpoint
