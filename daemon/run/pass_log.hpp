#pragma once

// The daemon's log lines of a pass while it runs. Each executed step is one line with every field
// it changed, both values and where Git declares the value (issue 21); each registration that did
// something, or failed, is one line. In the JSON log each line carries the revision, object and
// step fields.

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "daemon/common/log.hpp"
#include "daemon/pass/pass.hpp"
#include "daemon/run/suspension.hpp"

namespace flytecd::run {

// pass::Options::on_steps for a pass of `revision`: a line per step; adoptions are silent, a
// failed step is a warning naming its error.
pass::StepsCallback log_steps(std::shared_ptr<spdlog::logger> log, std::string revision);

// pass::Options::on_registration: a failure is a warning, a change an info line, in sync nothing.
std::function<void(const registration::RegistrationOutcome&)> log_registration(
    std::shared_ptr<spdlog::logger> log, std::string revision);

// The ownership message of a pass when it is not the ledger's, once per change of message
// (`last` holds the one logged; cleared when ownership is the ledger's again).
void log_ownership(spdlog::logger& log, const pass::Ownership& own, std::string& last);

// The suspensions in force, one warning each (at start and reload).
void log_suspensions(spdlog::logger& log, const std::optional<Suspension>& all,
                     const ProjectSuspensions& projects);

}  // namespace flytecd::run
