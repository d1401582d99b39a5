// `--listen HOST:PORT`, parsed the same whether or not the build has the HTTP server.
#include <fmt/format.h>

#include <charconv>

#include "core/printable.h"
#include "export/http_server.h"

namespace rtpulse::exporter {

Expected<ListenAddress> ParseListenAddress(std::string_view text) {
  const std::string given = Printable(text);
  const auto bad = [&given](std::string_view why) {
    return UsageError(fmt::format(
        "--listen '{}': {} (give HOST:PORT, e.g. 127.0.0.1:9464, 0.0.0.0:9464 or [::1]:9464)",
        given, why));
  };
  ListenAddress address;
  std::string_view port_text;
  if (text.starts_with('[')) {
    const size_t close = text.find(']');
    if (close == std::string_view::npos) return bad("an IPv6 address needs its closing ']'");
    address.host = std::string(text.substr(1, close - 1));
    const std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest[0] != ':') return bad("only ':PORT' may follow ']'");
      port_text = rest.substr(1);
      if (port_text.empty()) return bad("the port is missing after ':'");
    }
  } else {
    const size_t colon = text.rfind(':');
    if (colon != std::string_view::npos && text.find(':') != colon) {
      return bad("an IPv6 address goes in brackets");
    }
    address.host = std::string(text.substr(0, colon));
    if (colon != std::string_view::npos) {
      port_text = text.substr(colon + 1);
      if (port_text.empty()) return bad("the port is missing after ':'");
    }
    if (address.host.empty()) {
      if (colon == std::string_view::npos) return bad("empty");
      address.host = "0.0.0.0";
    }
  }
  if (address.host.empty()) return bad("the host is empty");
  if (address.host.find_first_not_of("0123456789") == std::string::npos) {
    return bad(
        fmt::format("'{}' alone is a host, not a port; for a port on every address give "
                    ":{}",
                    address.host, address.host));
  }
  if (!port_text.empty()) {
    unsigned port = 0;
    const auto [end, ec] =
        std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc{} || end != port_text.data() + port_text.size() || port > 65535) {
      return bad(fmt::format("port '{}' is not a number from 0 to 65535", Printable(port_text)));
    }
    address.port = static_cast<uint16_t>(port);
  }
  return address;
}

}  // namespace rtpulse::exporter
