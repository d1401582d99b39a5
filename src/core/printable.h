#pragma once

#include <string>
#include <string_view>

namespace rtpulse {

/// `text` as a message may quote it: printable ASCII and well-formed UTF-8 stay as they are;
/// tab, newline and carriage return become `\t`, `\n`, `\r`; every other byte (NUL and the
/// other control characters, DEL, C1 controls, bytes that are not UTF-8) becomes `\xNN`. So a
/// message that quotes binary input is one line of text a terminal shows as written. A
/// backslash is left as it is, which makes the function idempotent: applying it to a
/// message that already quotes escaped input changes nothing.
std::string Printable(std::string_view text);

/// A library's multi-line message (OpenCV's, Arm NN's) as one line a person reads: each line
/// trimmed of blanks and of a leading '>' (OpenCV's detail marker), empty ones dropped, the
/// rest joined by "; ".
std::string OneLine(std::string_view text);

}  // namespace rtpulse
