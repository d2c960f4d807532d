// Copyright 2026 The Zeus C++ Authors.
//
// libFuzzer target for zeusd's untrusted inputs: request targets (the query
// parser and its typed fields, as the routes read them), the GPU command
// overrides file, and request heads (the HTTP server's framing check, which
// zeusd and the batch-size service share). The first byte picks which; the
// rest is the input. Besides crashes and sanitizer reports, it aborts when a
// result breaks its contract: an id list that is not sorted, unique and in
// range, a parsed overrides file whose expanded commands still hold a brace,
// an error of the wrong kind, or a request head whose Transfer-Encoding the
// framing check accepts although Beast would not frame its body as chunked
// (request smuggling).

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "http/request_framing.h"
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

void FuzzRequestHead(std::string_view text) {
  namespace http = boost::beast::http;
  http::request_parser<http::string_body> parser;
  parser.header_limit(8192);
  parser.eager(false);  // stop after the head, as the server does
  boost::system::error_code ec;
  while (!parser.is_header_done()) {
    const std::size_t used = parser.put(boost::asio::buffer(text.data(), text.size()), ec);
    if (ec) return;  // malformed or incomplete: the server answers 400 or waits
    text.remove_prefix(used);
  }
  const auto& message = parser.get();
  std::vector<std::string_view> codings;
  for (auto [it, end] = message.equal_range(http::field::transfer_encoding); it != end; ++it) {
    codings.emplace_back(it->value().data(), it->value().size());
  }
  const auto verdict = zeus::http::internal::CheckRequestTransferEncoding(codings, message.version());
  if (verdict.kind != zeus::http::internal::FramingVerdict::kAccept) {
    Check(!verdict.reason.empty());
    return;
  }
  // Accepted: either no Transfer-Encoding (then Beast must not read chunks)
  // or one that Beast frames as chunked.
  Check(parser.chunked() == !codings.empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0: FuzzTarget(text); break;
    case 1: FuzzOverrides(text); break;
    default: FuzzRequestHead(text); break;
  }
  return 0;
}
