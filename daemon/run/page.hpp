#pragma once

// The read-only web page of `flytecd run` (GET / on the daemon's HTTP listener, issue 26): the
// daemon's state value as HTML, server-rendered so the overview reads without JavaScript, plus
// the stylesheet and the script embedded in the binary at build time (daemon/run/ui/). The page
// renders status_json(state) and the history the ledger gives (/api/v1/history); it computes
// nothing of its own, so what it shows and what the JSON endpoints answer are the same values,
// and the script refreshes it from those endpoints.
//
// Every value that comes from Git or FlyteAdmin is HTML-escaped here; the script inserts values
// with textContent only. The page has no inline script or style and no event-handler attribute,
// so it works under `Content-Security-Policy: default-src 'self'` (page_headers()).

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "daemon/common/http/wire.hpp"
#include "daemon/common/result.hpp"
#include "daemon/ledger/ledger.hpp"
#include "daemon/run/daemon_state.hpp"

namespace flytecd::run {

// The filters of the objects table, from the query string (?project=&domain=&kind=&state=);
// "" matches everything. Shareable: the same URL shows the same rows, with or without the script.
struct PageQuery {
  std::string project, domain, kind, state;
};
PageQuery page_query(const std::map<std::string, std::string>& params);

// An object key as the table shows it: "project/ml" is kind "project", project "ml";
// "override/P/D/W/TYPE" is kind TYPE (the matchable attribute) at that scope. Pure.
struct ObjectName {
  std::string kind, project, domain, workflow;
};
ObjectName object_name(std::string_view key);
// Whether a row (its name and state) passes the filters. Pure.
bool matches(const ObjectName& name, std::string_view state, const PageQuery& q);

// What the page shows besides the state value, read by the handler: the live leader-election
// state (as in status) and the ledger's latest history (history_json), or why it is missing.
struct PageData {
  nlohmann::json leader = nlohmann::json{{"enabled", false}};
  nlohmann::json history = nlohmann::json::array();
  std::string history_error;
};

// The data of GET /: `leader`, and the ledger's latest history or why it could not be read.
PageData page_data(nlohmann::json leader, const Result<std::vector<ledger::HistoryEntry>>& history);

// The page as one HTML document (UTF-8; ill-formed input bytes become U+FFFD). Pure.
std::string render_page(const DaemonState& state, const PageData& data, const PageQuery& query);

// & < > " ' as character references, after to_utf8_lossy: safe as element text and as a quoted
// attribute value. Pure.
std::string html_escape(std::string_view s);

// GET `path` of the page: "/" (render_page), "/ui.css" or "/ui.js" (embedded), else 404. The
// response carries page_headers(). Pure.
http::Response page_response(std::string_view path,
                             const std::map<std::string, std::string>& params,
                             const DaemonState& state, const PageData& data);

// The headers of the page and its assets: Content-Security-Policy (default-src 'self'),
// X-Content-Type-Options: nosniff, X-Frame-Options: DENY, Referrer-Policy, Cache-Control.
std::vector<std::pair<std::string, std::string>> page_headers();

}  // namespace flytecd::run
