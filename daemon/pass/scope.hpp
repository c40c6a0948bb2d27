#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/ledger/ledger.hpp"
#include "daemon/model/documents.hpp"
#include "daemon/reconcile/plan.hpp"

namespace flytecd::pass {

// The part of the repository and of FlyteAdmin one pass reconciles. Everything outside it is
// neither observed, planned, written nor deleted. Two forms:
//   `--project P [--domain D]`: one project; with a domain, only rows of that domain (and its
//     workflow scopes) are in scope: the project object and project-level overrides are not;
//   `projects`: a targeted pass after a Git change (pass.hpp Targeted): every part of each of
//     these projects, in every domain.
// Platform defaults and generic objects are in no project's scope. Empty: everything.
struct PassScope {
  std::string project;
  std::string domain;
  std::optional<std::set<std::string>> projects = {};  // set (even empty): a targeted pass
  bool empty() const { return project.empty() && !projects; }
  // "project data-eng", "project data-eng, domain production", "2 projects (a, b)".
  std::string describe() const;
};

// Whether a (project, domain) pair is in scope (domain "" = project level). Pure.
bool in_scope(const PassScope& scope, std::string_view project, std::string_view domain);
// Whether an object key ("project/P", "override/P/D/W/TYPE", "registration/P/D/NAME") is in
// scope; keys of another form (platform defaults "override//D//TYPE") are out of any project's.
bool key_in_scope(const PassScope& scope, std::string_view key);

// The narrowing of each input of the pass: applied once to what Git declares and to what
// FlyteAdmin and the ledger say (pass.cpp), and again to every re-observation. Pure; identity for
// an empty scope.
void narrow(const PassScope& scope, reconcile::State& state);
void narrow(const PassScope& scope, reconcile::Managed& managed);
void narrow(const PassScope& scope, std::map<std::string, ledger::RegistrationRecord>& records);
// Live state and the ledger's managed objects together (the pass and each re-observation).
void narrow(const PassScope& scope, reconcile::State& live, reconcile::Managed& managed);
std::vector<model::Registration> narrowed(const PassScope& scope,
                                          const std::vector<model::Registration>& declared);
reconcile::State narrowed(const PassScope& scope, reconcile::State state);
// A revision's documents in scope (the PR view, `plan --git --project`): projects (not with a
// domain), overrides and registrations of the scope; platform defaults are in no project's.
model::Documents narrowed(const PassScope& scope, const model::Documents& docs);
// History entries: only steps on keys in scope; an entry left without steps is dropped.
void narrow(const PassScope& scope, std::vector<ledger::HistoryEntry>& entries);

// What a Git change touched, for a targeted pass (pass.hpp Options::targeted): the projects named
// by any document in a file that differs between the two revisions (added, removed, or another
// content id), in either revision. `everything` (with why) when such a file holds what is in no
// project (platform defaults, generic objects). A project with a registration whose package or
// `verify.key` is a file of the repository is always touched (that file can change without a
// document changing); with `repository_keys` (packages.verify names a repository key) every
// project with a registration is. Pure.
struct ChangedProjects {
  bool everything = false;
  std::string why;
  std::set<std::string> projects;
};
ChangedProjects changed_projects(const model::Documents& before,
                                 const std::map<std::string, std::string>& before_files,
                                 const model::Documents& after,
                                 const std::map<std::string, std::string>& after_files,
                                 bool repository_keys);

}  // namespace flytecd::pass
