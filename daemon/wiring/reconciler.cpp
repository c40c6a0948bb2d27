#include "daemon/wiring/reconciler.hpp"

#include "daemon/wiring/wiring.hpp"

namespace flytecd::wiring {

bool LoadedRevision::ok() const { return !model::has_errors(diagnostics); }

pass::Revision LoadedRevision::pass_revision() const {
  return pass::Revision{revision, subject, &docs, author, committed_at};
}

Reconciler::Reconciler(config::Config cfg, std::unique_ptr<sources::Source> source)
    : m_cfg(std::move(cfg)),
      m_source(std::move(source)),
      m_loader(model::Limits{}, m_cfg.documents),
      m_memory(m_cfg.packages.memory_budget_bytes) {}

Reconciler::~Reconciler() { close_target(); }

Result<std::unique_ptr<Reconciler>> Reconciler::open(const config::Config& cfg) {
  auto source = make_source(cfg);
  if (!source) return source.error();
  return std::unique_ptr<Reconciler>(new Reconciler(cfg, std::move(*source)));
}

Result<LoadedRevision> Reconciler::load(const std::string& at) {
  auto snap = at.empty() ? m_source->sync() : m_source->snapshot_at(at);
  if (!snap) return snap.error();
  return load_snapshot(*snap);
}

LoadedRevision Reconciler::load_snapshot(const sources::Snapshot& snap,
                                         const std::set<std::string>* only) {
  LoadedRevision out;
  out.revision = snap.revision;
  out.subject = snap.subject;
  out.author = snap.author;
  out.committed_at = snap.commit_time;
  std::vector<sources::SourceFile> files;
  std::vector<std::string> ids;
  for (size_t i = 0; i < snap.files.size() && i < snap.blob_ids.size(); ++i) {
    out.files.emplace(snap.files[i].path, snap.blob_ids[i]);
    if (only && !only->count(snap.files[i].path)) continue;
    files.push_back(snap.files[i]);
    ids.push_back(snap.blob_ids[i]);
  }
  auto loaded = only ? m_loader.load(files, ids) : m_loader.load(snap.files, snap.blob_ids);
  out.docs = std::move(loaded.documents);
  out.diagnostics = std::move(loaded.diagnostics);
  out.files_parsed = m_loader.parsed_last();
  out.loads = m_loader.last_files();
  return out;
}

Status Reconciler::open_target(Access access) {
  close_target();
  auto t = wiring::open_target(m_cfg, access);
  if (!t) return t.error();
  m_target = std::make_unique<Target>(std::move(*t));
  m_record = make_file_record_store(m_cfg);
  return ok_status();
}

void Reconciler::use_record(std::unique_ptr<pass::RecordStore> record) {
  m_record = record ? std::move(record) : make_file_record_store(m_cfg);
}

void Reconciler::close_target() {
  m_record.reset();
  m_target.reset();  // the lock is released last (Target's first member)
}

pass::Report Reconciler::pass(const LoadedRevision& rev, pass::Options options) {
  m_pass_revision = rev.revision;
  if (!m_packages)
    m_packages = make_package_source(m_cfg, [this](const std::string& path) {
      return m_source->read_file(m_pass_revision, path, registration::k_max_repo_package_bytes);
    });
  if (!options.memory) options.memory = &m_memory;
  pass::Wiring w;
  w.sink = &m_target->pass_sink();  // ConfigMap mode: overrides to the ConfigMap
  w.entities = m_target->pass_sink().entities();
  w.packages = m_packages.get();
  w.ledger = m_target->ledger.get();
  w.target = m_target->description;
  w.record = m_record.get();
  // Ownership is rebuilt from the source's history (a directory has none: its error says so).
  w.revision_at = [this](const std::string& id) { return earlier_revision(m_cfg, *m_source, id); };
  options.config_fingerprint = ownership_fingerprint(m_cfg);
  if (options.writer.empty()) options.writer = host_identity();
  return pass::run(rev.pass_revision(), w, options);
}

}  // namespace flytecd::wiring
