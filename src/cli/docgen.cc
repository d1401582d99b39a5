// Man pages and bash completion generated from the CLI11 command tree (BuildApp in app.cc), so
// they cannot drift from what `rtpulse --help` says. Run at build time by rtpulse-docgen.

#include "cli/docgen.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <sstream>
#include <string_view>

#include "core/parse.h"

namespace rtpulse::cli {
namespace {

/// groff escapes: backslash, hyphen (so `man` copies "--json" as typed), and a leading dot or
/// quote that would otherwise start a request.
std::string Escape(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out.insert(0, "\\&");
  return out;
}

std::string Upper(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return text;
}

/// "rtpulse kernel verify" for a nested command.
std::string CommandPath(const CLI::App& app) {
  std::string path = app.get_name();
  for (const CLI::App* p = app.get_parent(); p != nullptr; p = p->get_parent()) {
    path = p->get_name() + " " + path;
  }
  return path;
}

std::vector<const CLI::Option*> VisibleOptions(const CLI::App& app) {
  return app.get_options([](const CLI::Option* o) { return !o->get_group().empty(); });
}

std::vector<const CLI::App*> VisibleSubcommands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); });
}

bool TakesValue(const CLI::Option& o) {
  return o.get_items_expected_max() > 0;
}

/// The value placeholder shown after an option: CLI11's type name, its validator part when it
/// has one ("TEXT:FILE" -> "FILE"), in brackets when the value may be left out.
std::string ValueName(const CLI::Option& o) {
  std::string type = o.get_type_name();
  if (const auto colon = type.rfind(':'); colon != std::string::npos) type = type.substr(colon + 1);
  if (type.empty()) type = "VALUE";
  const bool optional = o.get_expected_min() == 0 && type.front() != '[';
  std::string name = optional ? "[" + type + "]" : type;
  if (o.get_expected_max() > 1) name += "...";
  return name;
}

std::vector<std::string> OptionNames(const CLI::Option& o) {
  std::vector<std::string> names;
  for (const auto& s : o.get_snames()) names.push_back("-" + s);
  for (const auto& l : o.get_lnames()) names.push_back("--" + l);
  return names;
}

/// One footer split by the prefixes the commands use: "Exit codes:", "Docs:", "Environment:"
/// start a block and indented lines continue it; everything else is description.
struct Footer {
  std::vector<std::string> description;
  std::vector<std::string> exit_codes;
  std::vector<std::string> docs;
  std::vector<std::string> environment;
};

void AppendLine(std::vector<std::string>& block, const std::string& text, bool continuation) {
  if (continuation && !block.empty()) {
    block.back() += " " + text;
  } else {
    block.push_back(text);
  }
}

Footer SplitFooter(const std::string& footer) {
  Footer out;
  std::vector<std::string>* current = &out.description;
  std::istringstream in(footer);
  std::string line;
  constexpr std::array<std::pair<std::string_view, std::vector<std::string> Footer::*>, 3>
      kPrefixes = {{{"Exit codes:", &Footer::exit_codes},
                    {"Docs:", &Footer::docs},
                    {"Environment:", &Footer::environment}}};
  while (std::getline(in, line)) {
    if (TrimBlanks(line).empty()) continue;
    const bool indented = line.front() == ' ' || line.front() == '\t';
    if (indented) {
      AppendLine(*current, std::string(TrimBlanks(line)), true);
      continue;
    }
    current = &out.description;
    std::string text = line;
    for (const auto& [prefix, member] : kPrefixes) {
      if (line.rfind(prefix, 0) == 0) {
        current = &(out.*member);
        text = TrimBlanks(std::string_view(line).substr(prefix.size()));
        break;
      }
    }
    AppendLine(*current, text, false);
  }
  return out;
}

std::string Synopsis(const CLI::App& app) {
  std::string out = fmt::format(".B {}\n", Escape(CommandPath(app)));
  if (!VisibleOptions(app).empty()) out += "[\\fIOPTIONS\\fR]\n";
  for (const CLI::Option* o : VisibleOptions(app)) {
    if (o->nonpositional()) continue;
    std::string name = fmt::format("\\fI{}\\fR", Escape(o->get_name(true)));
    if (o->get_expected_max() > 1) name += "...";
    out += o->get_required() ? name + "\n" : "[" + name + "]\n";
  }
  if (!VisibleSubcommands(app).empty()) out += "\\fICOMMAND\\fR [\\fIOPTIONS\\fR]\n";
  return out;
}

std::string OptionList(const CLI::App& app) {
  std::string out;
  for (const CLI::Option* o : VisibleOptions(app)) {
    out += ".TP\n";
    if (o->nonpositional()) {
      std::vector<std::string> bold;
      for (const auto& n : OptionNames(*o)) bold.push_back(fmt::format("\\fB{}\\fR", Escape(n)));
      out += fmt::format("{}", fmt::join(bold, ", "));
      if (TakesValue(*o)) out += fmt::format(" \\fI{}\\fR", Escape(ValueName(*o)));
      out += "\n";
    } else {
      out += fmt::format("\\fI{}\\fR\n", Escape(o->get_name(true)));
    }
    std::string text = o->get_description();
    if (!o->get_default_str().empty()) text += fmt::format(" (default: {})", o->get_default_str());
    if (o->get_required() && o->nonpositional()) text += " (required)";
    out += Escape(text) + "\n";
  }
  return out;
}

std::string Paragraphs(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& line : lines) out += ".PP\n" + Escape(line) + "\n";
  return out;
}

std::string ManName(const CLI::App& app) {
  std::string name = CommandPath(app);
  std::replace(name.begin(), name.end(), ' ', '-');
  return name;
}

std::string NestedCommands(const CLI::App& app) {
  const auto subs = VisibleSubcommands(app);
  if (subs.empty()) return "";
  std::string out = ".SH COMMANDS\n";
  for (const CLI::App* sub : subs) {
    out += fmt::format(".SS \"{}\"\n", Escape(CommandPath(*sub)));
    out += Escape(sub->get_description()) + "\n";
    out += ".PP\n" + Synopsis(*sub);
    if (!VisibleOptions(*sub).empty()) out += ".PP\nOptions:\n" + OptionList(*sub);
    const Footer footer = SplitFooter(sub->get_footer());
    out += Paragraphs(footer.description);
    for (const auto& e : footer.exit_codes) out += ".PP\nExit codes: " + Escape(e) + "\n";
    out += NestedCommands(*sub);
  }
  return out;
}

}  // namespace

std::string RenderManPage(const CLI::App& root, const CLI::App& command, const ManHeader& header) {
  const bool is_root = &root == &command;
  const std::string name = ManName(command);
  const Footer footer = SplitFooter(command.get_footer());
  std::string out;
  out += ".\\\" Generated by rtpulse-docgen from the CLI definitions in src/cli; do not edit.\n";
  out += fmt::format(".TH {} 1 \"{}\" \"rtpulse {}\" \"User Commands\"\n", Escape(Upper(name)),
                     header.date, header.version);
  std::string summary = command.get_description();
  if (is_root && summary.rfind("rtpulse: ", 0) == 0) summary = summary.substr(9);
  out += fmt::format(".SH NAME\n{} \\- {}\n", Escape(name), Escape(summary));
  out += ".SH SYNOPSIS\n" + Synopsis(command);
  out += ".SH DESCRIPTION\n" + Escape(summary) + ".\n" + Paragraphs(footer.description);
  if (is_root) {
    out +=
        ".PP\nEach command has its own page: \\fBman rtpulse\\-\\fIcommand\\fR, and its own "
        "\\fB\\-\\-help\\fR.\n";
  }
  if (!VisibleOptions(command).empty()) out += ".SH OPTIONS\n" + OptionList(command);
  if (is_root) {
    out += ".SH COMMANDS\n";
    for (const CLI::App* sub : VisibleSubcommands(command)) {
      out += fmt::format(".TP\n.BR {} \" ({})\"\n{}\n", Escape(sub->get_name()),
                         Escape(ManName(*sub)) + "(1)", Escape(sub->get_description()));
    }
  } else {
    out += NestedCommands(command);
  }
  if (!footer.exit_codes.empty()) {
    out += ".SH EXIT STATUS\n";
    for (const auto& e : footer.exit_codes) out += Escape(e) + "\n";
  }
  if (!footer.environment.empty()) out += ".SH ENVIRONMENT\n" + Paragraphs(footer.environment);
  out += ".SH SEE ALSO\n";
  std::vector<std::string> see;
  if (is_root) {
    for (const CLI::App* sub : VisibleSubcommands(command)) {
      see.push_back(fmt::format(".BR {} (1)", Escape(ManName(*sub))));
    }
  } else {
    see.push_back(".BR rtpulse (1)");
  }
  see.push_back(".BR cyclictest (8)");
  out += fmt::format("{}\n", fmt::join(see, ",\n"));
  for (const auto& d : footer.docs) out += ".PP\nDocumentation: " + Escape(d) + "\n";
  out +=
      ".PP\nThe docs/ folder of the source tree is installed as share/doc/rtpulse/ under the "
      "installation prefix (/usr/share/doc/rtpulse/ from the Debian package).\n";
  return out;
}

namespace {

enum class ValueKind { kNone, kFile, kFolder };

/// Path-valued options and positionals, where completing file or folder names helps.
ValueKind KindOf(const CLI::Option& o) {
  if (!TakesValue(o)) return ValueKind::kNone;
  const std::string type = Upper(o.get_type_name());
  if (type.find("DIR") != std::string::npos) return ValueKind::kFolder;
  if (type.find("FILE") != std::string::npos || type.find("PATH") != std::string::npos) {
    return ValueKind::kFile;
  }
  std::vector<std::string> names = OptionNames(o);
  if (!o.nonpositional()) names.push_back(o.get_name(true));
  constexpr std::array kFolders = {"--OUT", "--FIGURES"};
  constexpr std::array kFiles = {"--JSON",     "--HTML", "--SAMPLES", "--HISTFILE", "--CONFIG",
                                 "--FRAGMENT", "FILE",   "RUN",       "RUNS"};
  for (const auto& n : names) {
    const std::string name = Upper(n);
    for (const char* f : kFolders) {
      if (name == f) return ValueKind::kFolder;
    }
    for (const char* f : kFiles) {
      if (name == f) return ValueKind::kFile;
    }
  }
  return ValueKind::kNone;
}

struct CompletionTable {
  std::vector<std::pair<std::string, std::string>> subcommands;  ///< path -> "a b c"
  std::vector<std::pair<std::string, std::string>> options;      ///< path -> "-x --xx"
  std::vector<std::pair<std::string, std::string>> file_options;
  std::vector<std::pair<std::string, std::string>> folder_options;
  std::vector<std::string> file_positionals;  ///< paths whose positionals are paths
};

void Collect(const CLI::App& app, CompletionTable& table) {
  const std::string path = CommandPath(app);
  std::vector<std::string> subs;
  for (const CLI::App* sub : VisibleSubcommands(app)) subs.push_back(sub->get_name());
  if (!subs.empty()) table.subcommands.emplace_back(path, fmt::format("{}", fmt::join(subs, " ")));
  std::vector<std::string> names;
  std::vector<std::string> files;
  std::vector<std::string> folders;
  bool positional_paths = false;
  for (const CLI::Option* o : VisibleOptions(app)) {
    const ValueKind kind = KindOf(*o);
    if (!o->nonpositional()) {
      positional_paths = positional_paths || kind != ValueKind::kNone;
      continue;
    }
    for (const auto& n : OptionNames(*o)) {
      names.push_back(n);
      if (kind == ValueKind::kFile) files.push_back(n);
      if (kind == ValueKind::kFolder) folders.push_back(n);
    }
  }
  table.options.emplace_back(path, fmt::format("{}", fmt::join(names, " ")));
  if (!files.empty())
    table.file_options.emplace_back(path, fmt::format("{}", fmt::join(files, " ")));
  if (!folders.empty()) {
    table.folder_options.emplace_back(path, fmt::format("{}", fmt::join(folders, " ")));
  }
  if (positional_paths) table.file_positionals.push_back(path);
  for (const CLI::App* sub : VisibleSubcommands(app)) Collect(*sub, table);
}

std::string AssocArray(const std::string& name,
                       const std::vector<std::pair<std::string, std::string>>& rows) {
  std::string out = fmt::format("  local -A {}=(\n", name);
  for (const auto& [key, value] : rows) out += fmt::format("    [\"{}\"]=\"{}\"\n", key, value);
  return out + "  )\n";
}

}  // namespace

std::string RenderBashCompletion(const CLI::App& root) {
  CompletionTable table;
  Collect(root, table);
  std::string out =
      "# bash completion for rtpulse. Generated by rtpulse-docgen from the CLI definitions in\n"
      "# src/cli; do not edit.\n"
      "_rtpulse() {\n"
      "  local cur=\"${COMP_WORDS[COMP_CWORD]}\"\n"
      "  local prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n";
  out += AssocArray("subcommands", table.subcommands);
  out += AssocArray("options", table.options);
  out += AssocArray("file_options", table.file_options);
  out += AssocArray("folder_options", table.folder_options);
  out += fmt::format("  local file_positionals=\"|{}|\"\n", fmt::join(table.file_positionals, "|"));
  out += fmt::format("  local cmd=\"{}\" i word\n", root.get_name());
  out +=
      "  # The command path so far: each word that names a subcommand of the path descends.\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    word=\"${COMP_WORDS[i]}\"\n"
      "    [[ \"$word\" == -* ]] && continue\n"
      "    if [[ \" ${subcommands[$cmd]} \" == *\" $word \"* ]]; then cmd=\"$cmd $word\"; fi\n"
      "  done\n"
      "  if [[ \" ${file_options[$cmd]} \" == *\" $prev \"* ]]; then\n"
      "    compopt -o filenames 2>/dev/null\n"
      "    COMPREPLY=($(compgen -f -- \"$cur\"))\n"
      "    return\n"
      "  fi\n"
      "  if [[ \" ${folder_options[$cmd]} \" == *\" $prev \"* ]]; then\n"
      "    compopt -o filenames 2>/dev/null\n"
      "    COMPREPLY=($(compgen -d -- \"$cur\"))\n"
      "    return\n"
      "  fi\n"
      "  if [[ \"$cur\" == -* ]]; then\n"
      "    COMPREPLY=($(compgen -W \"${options[$cmd]}\" -- \"$cur\"))\n"
      "    return\n"
      "  fi\n"
      "  if [[ -n \"${subcommands[$cmd]}\" ]]; then\n"
      "    COMPREPLY=($(compgen -W \"${subcommands[$cmd]}\" -- \"$cur\"))\n"
      "    return\n"
      "  fi\n"
      "  if [[ \"$file_positionals\" == *\"|$cmd|\"* ]]; then\n"
      "    compopt -o filenames 2>/dev/null\n"
      "    COMPREPLY=($(compgen -f -- \"$cur\"))\n"
      "  fi\n"
      "}\n"
      "complete -F _rtpulse rtpulse\n";
  return out;
}

std::vector<std::pair<std::string, std::string>> GenerateDocs(const CLI::App& root,
                                                              const ManHeader& header) {
  std::vector<std::pair<std::string, std::string>> files;
  files.emplace_back("rtpulse.1", RenderManPage(root, root, header));
  for (const CLI::App* sub : VisibleSubcommands(root)) {
    files.emplace_back(ManName(*sub) + ".1", RenderManPage(root, *sub, header));
  }
  files.emplace_back("rtpulse.bash", RenderBashCompletion(root));
  return files;
}

}  // namespace rtpulse::cli
