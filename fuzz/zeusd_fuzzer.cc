// Copyright 2026 The Zeus C++ Authors.
//
// libFuzzer target for zeusd's untrusted inputs: request targets (the query
// parser and its typed fields, as the routes read them) and the GPU command
// overrides file. The first byte picks which; the rest is the input. Besides
// crashes and sanitizer reports, it aborts when a result breaks its contract:
// an id list that is not sorted, unique and in range, a parsed overrides file
// whose expanded commands still hold a brace, or an error of the wrong kind.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "zeusd/command_override.h"
#include "zeusd/query.h"

namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

void FuzzTarget(std::string_view text) {
  auto target = zeus::zeusd::ParseTarget(text);
  if (!target) {
    Check(target.error().code() == zeus::ErrorCode::kInvalidArgument);
    return;
  }
  zeus::zeusd::QueryFields fields(*target, {"gpu_ids", "power_limit_mw", "block", "enabled"});
  auto ids = zeus::zeusd::OptionalIdList(fields, "gpu_ids", 8, "GPU");
  if (ids) {
    for (std::size_t i = 0; i < ids->size(); ++i) {
      Check((*ids)[i] < 8);
      if (i > 0) Check((*ids)[i - 1] < (*ids)[i]);
    }
  } else {
    Check(ids.error().code() == zeus::ErrorCode::kInvalidArgument);
  }
  auto mw = fields.RequireUnsigned("power_limit_mw", 0xffffffffu);
  if (mw) Check(*mw <= 0xffffffffu);
  auto block = fields.RequireBool("block");
  (void)fields.GetBool("enabled");
  zeus::Status done = fields.Finish();
  if (!done) Check(done.error().code() == zeus::ErrorCode::kInvalidArgument);
  (void)block;
}

void FuzzOverrides(std::string_view text) {
  auto overrides = zeus::zeusd::GpuCommandOverrides::Parse(text, "fuzz.toml");
  if (!overrides) {
    Check(overrides.error().code() == zeus::ErrorCode::kInvalidArgument);
    return;
  }
  zeus::zeusd::GpuOpArgs args;
  args.power_limit_mw = 123'456;
  args.enabled = true;
  args.min_clock_mhz = 1;
  args.max_clock_mhz = 2;
  for (zeus::zeusd::GpuOp op : zeus::zeusd::kAllGpuOps) {
    const zeus::zeusd::OverrideSpec* spec = overrides->Find(op);
    if (spec == nullptr) continue;
    Check(!spec->commands.empty() && spec->timeout.count() > 0);
    for (const auto& command : zeus::zeusd::GpuCommandOverrides::Expand(*spec, 3, args)) {
      Check(!command.empty());
      for (const std::string& word : command) {
        Check(word.find('{') == std::string::npos && word.find('}') == std::string::npos);
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    FuzzTarget(text);
  } else {
    FuzzOverrides(text);
  }
  return 0;
}
