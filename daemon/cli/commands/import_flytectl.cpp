// `flytecd import --from-flytectl FILE... --out DIR`: flytectl attribute files written as a
// flytecd repository.
#include "daemon/cli/commands/import_flytectl.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "daemon/model/flytectl_attrs.hpp"

namespace flytecd::cli {
namespace fs = std::filesystem;
namespace fc = model::flytectl;

namespace {

constexpr const char* k_prefix = "flytecd import --from-flytectl: ";

bool read_input(const std::string& path, const model::Limits& limits, model::SourceFile& file,
                std::string& error) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec) {
    error = "cannot read " + path + ": " + ec.message();
    return false;
  }
  file.path = path;
  file.size = static_cast<size_t>(size);
  if (file.size > limits.max_file_bytes) return true;  // reported by the parser as too large
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (!in) {
    error = "cannot read " + path;
    return false;
  }
  file.bytes = bytes.str();
  return true;
}

std::string scope_text(const fc::FileReport& f) {
  if (!f.type) return "";
  return " (" + fc::type_name(*f.type) + ", " + std::string(model::to_string(f.scope.level())) +
         " " + model::to_string(f.scope) + ")";
}

}  // namespace

int run_import_flytectl(const ImportFlytectlOptions& opt, std::ostream& out, std::ostream& err) {
  std::optional<model::AttributeType> forced;
  if (!opt.type.empty()) {
    forced = fc::type_from_name(opt.type);
    if (!forced) {
      std::string names;
      for (const auto& n : fc::type_names()) names += (names.empty() ? "" : ", ") + n;
      err << k_prefix << "unknown --type '" << opt.type << "' (one of: " << names << ")\n";
      return 1;
    }
  }
  std::vector<model::SourceFile> inputs;
  for (const auto& path : opt.files) {
    model::SourceFile f;
    std::string error;
    if (!read_input(path, opt.limits, f, error)) {
      err << k_prefix << error << "\n";
      return 1;
    }
    inputs.push_back(std::move(f));
  }

  const auto result = fc::import_files(inputs, forced, opt.policy, opt.limits);
  size_t imported = 0, skipped = 0, invalid = 0;
  for (const auto& f : result.files) {
    for (const auto& d : f.diagnostics) err << model::format(d) << "\n";
    switch (f.outcome) {
      case fc::Outcome::imported:
        ++imported;
        break;
      case fc::Outcome::skipped:
        ++skipped;
        err << "skipped " << f.path << scope_text(f) << ": FlyteAdmin cannot store it\n";
        break;
      case fc::Outcome::invalid:
        ++invalid;
        err << "invalid " << f.path << scope_text(f) << "\n";
        break;
    }
  }
  if (!result.output_diagnostics.empty()) {
    for (const auto& d : result.output_diagnostics) err << model::format(d) << "\n";
    err << k_prefix << "the converted documents do not validate (a flytecd bug); nothing written\n";
    return 1;
  }
  if (invalid && !opt.skip_invalid) {
    err << k_prefix << invalid << " of " << result.files.size()
        << " files are invalid; nothing written (--skip-invalid writes the others)\n";
    return 1;
  }
  // Never overwrite: a migration into an existing repository must not clobber a reviewed file.
  bool clash = false;
  for (const auto& o : result.outputs) {
    std::error_code ec;
    if (fs::exists(fs::path(opt.out_dir) / o.path, ec)) {
      err << k_prefix << (fs::path(opt.out_dir) / o.path).string() << " already exists\n";
      clash = true;
    }
  }
  if (clash) {
    err << k_prefix << "nothing written (move the existing files away, or pick another --out)\n";
    return 1;
  }
  size_t documents = 0;
  for (const auto& o : result.outputs) {
    const fs::path p = fs::path(opt.out_dir) / o.path;
    std::error_code ec;
    fs::create_directories(p.parent_path(), ec);
    std::ofstream f(p, std::ios::binary);
    f << o.text;
    f.close();
    if (ec || !f) {
      err << k_prefix << "cannot write " << p.string() << "\n";
      return 1;
    }
    out << "wrote " << p.string() << " (" << o.documents
        << (o.documents == 1 ? " document)\n" : " documents)\n");
    documents += o.documents;
  }
  out << "imported " << imported << " of " << result.files.size() << " flytectl files into "
      << documents << " Overrides documents under " << opt.out_dir;
  if (skipped) out << "; " << skipped << " skipped (FlyteAdmin cannot store them)";
  if (invalid) out << "; " << invalid << " invalid, left out (--skip-invalid)";
  out << "\n";
  return 0;
}

}  // namespace flytecd::cli
