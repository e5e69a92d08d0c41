// What an opened checkpoint file holds, and (format_version 2) whether that matches its manifest: every dataset the
// manifest lists exists with the listed element type and shape, and the file holds no dataset, group or other object
// the manifest does not account for, so nothing unexpected is silently read or silently ignored.
// Callers hold the process-wide HDF5 lock (core/common/hdf5_lock.h).
#pragma once

#include <hdf5.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/manifest.h"
#include "checkpoint/snapshot.h"

namespace sluice::checkpoint {

// Every object reachable by hard links, as absolute paths ("/model/layer_0000/weight"), in name order.
struct FileObjects {
  std::vector<std::string> datasets;
  std::vector<std::string> groups;  // without "/"
  std::vector<std::string> others;  // committed datatypes and anything else HDF5 may hold
};
FileObjects list_objects(hid_t file_handle, const std::string& file);

// The dataspace dimensions of an open dataset; Error(kCheckpoint) naming file and object when HDF5 fails or a
// dimension does not fit int64.
std::vector<int64_t> dataset_dims(hid_t dataset, const std::string& file, const std::string& object);
// The element type of an open dataset (float32/64, signed int32/64, any byte order); nullopt for anything else.
std::optional<DataType> stored_data_type(hid_t dataset, const std::string& file, const std::string& object);

// Reads and checks /manifest (its crc32 covers kManifestChecksumHeader followed by the text). Error(kCheckpoint)
// naming file and dataset when it is missing, not a fixed-length string, fails its checksum or is malformed.
Manifest read_manifest(hid_t file_handle, const std::string& file);

// Error(kCheckpoint) naming file and the attribute when: an attribute of the root, a group or a dataset is not
// listed in the manifest (a dataset's own crc32 excepted: it is checked against the data); a listed attribute is
// missing, of another type, or its value does not match its listed crc32 (attribute_crc32).
void verify_attributes(hid_t file_handle, const std::string& file, const FileObjects& objects,
                       const Manifest& manifest);

// Error(kCheckpoint) naming file and the dataset or group when: a listed dataset is missing or has another type or
// shape than listed; a dataset is not listed; a group is neither one of the format's top-level groups nor on the
// path of a listed dataset; or the file holds another kind of object.
void verify_structure(hid_t file_handle, const std::string& file, const FileObjects& objects,
                      const std::map<std::string, ManifestLine>& manifest);

}  // namespace sluice::checkpoint
