#include "sources/local/package_source.hpp"

#include "daemon/common/digest.hpp"

namespace flytecd::sources::local {
namespace {

class RepoPackageSource : public PackageSource {
 public:
  explicit RepoPackageSource(RepoFileReader read) : m_read(std::move(read)) {}

  Result<LoadedPackage> load(const PackageRef& ref, const LoadControl&) override {
    if (ref.kind != PackageRef::Kind::path)
      return make_error(ErrorCode::invalid_input,
                        "package " + ref.to_string() + ": not a repository path");
    if (!m_read)
      return make_error(ErrorCode::invalid_input,
                        "package " + ref.path + ": this source cannot read repository files");
    auto bytes = m_read(ref.path);
    if (!bytes) return bytes.error().wrap("package " + ref.path);
    LoadedPackage out;
    out.reference = ref.to_string();
    out.bytes = std::move(*bytes);
    out.digest = "sha256:" + digest::sha256_hex(out.bytes);
    if (ref.pinned() && ref.digest != out.digest)
      return make_error(ErrorCode::invalid_input, "package " + ref.path + ": content is " +
                                                      out.digest + ", but the document pins " +
                                                      ref.digest);
    return out;
  }

 private:
  RepoFileReader m_read;
};

}  // namespace

std::unique_ptr<PackageSource> make_package_source(RepoFileReader read) {
  return std::make_unique<RepoPackageSource>(std::move(read));
}

}  // namespace flytecd::sources::local
