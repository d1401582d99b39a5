#pragma once

namespace rtpulse {

/// Whether text written to `fd` may carry ANSI colour: only on a terminal, never when NO_COLOR
/// is set and non-empty (https://no-color.org), never when TERM is "dumb". Every command that
/// colours its output asks this, so the rule is the same everywhere.
bool ColorEnabled(int fd);

/// The rule of ColorEnabled with its inputs given (for tests): `no_color` and `term` are the
/// environment values, nullptr when unset.
bool ColorEnabled(bool is_terminal, const char* no_color, const char* term);

}  // namespace rtpulse
