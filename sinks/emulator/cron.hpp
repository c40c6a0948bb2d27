#pragma once

// The cron parser FlyteAdmin validates schedules with (github.com/robfig/cron/v3 ParseStandard),
// reproduced for its accept/refuse decision and its error texts (internal to sinks/emulator).

#include <string>

namespace flytecd::sinks::emulator::detail {

// "" when robfig/cron's ParseStandard accepts `spec`: five fields (minute hour day-of-month
// month day-of-week, with names, ranges, steps, '*' and '?'), a descriptor (@yearly, @annually,
// @monthly, @weekly, @daily, @midnight, @hourly, "@every <Go duration>"), optionally after
// "TZ=<zone> " or "CRON_TZ=<zone> ". Otherwise the error text the Go library returns. Pure.
std::string cron_parse_error(const std::string& spec);

}  // namespace flytecd::sinks::emulator::detail
