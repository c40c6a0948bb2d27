#pragma once
// A local HTTPS stand-in for the parts of the Kubernetes API flytecd uses, for integration tests:
// coordination.k8s.io/v1 Leases (GET, POST, PUT with resourceVersion: a stale one gets 409
// Conflict, as the API server's optimistic concurrency does), ConfigMap GET, create (POST: an
// existing one gets 409 AlreadyExists), update (PUT with resourceVersion: a stale one gets 409
// Conflict, a missing one 404; a PUT without resourceVersion is unconditional, as in Kubernetes)
// and server-side apply (PATCH application/apply-patch+yaml; the request is recorded),
// Deployment strategic-merge PATCH (recorded) and core/v1 Event create (POST, recorded). Bearer
// tokens are checked (401 otherwise); requests carrying a "blocked" token get 503, to simulate one
// replica losing the API server. TLS uses a self-signed certificate for 127.0.0.1 made with the
// openssl CLI at test time.
//
// It is not an API server: no admission, no validation of objects, no field-ownership merge
// for server-side apply (the applied ConfigMap's data simply replaces the stored data), no
// watch, and one clock for everyone.
#include <httplib.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace flytecd::testing {

class KubeStandIn {
 public:
  struct Applied {
    std::string method, path, content_type, field_manager, force, body;
  };
  struct LeaseWrite {
    std::string holder;
    int transitions = 0;
  };

  // Writes ca.crt/tls.key under `dir` and starts serving on a free loopback port.
  explicit KubeStandIn(const std::filesystem::path& dir) : m_dir(dir) {
    const std::string cmd =
        "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 "
        "-addext subjectAltName=IP:127.0.0.1 -keyout " +
        (dir / "tls.key").string() + " -out " + (dir / "ca.crt").string() + " 2>/dev/null";
    m_ok = std::system(cmd.c_str()) == 0;
    if (!m_ok) return;
    m_server =
        std::make_unique<httplib::SSLServer>((dir / "ca.crt").c_str(), (dir / "tls.key").c_str());
    routes();
    m_port = m_server->bind_to_any_port("127.0.0.1");
    m_thread = std::thread([this] { m_server->listen_after_bind(); });
    for (int i = 0; i < 200 && !m_server->is_running(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ~KubeStandIn() {
    if (m_server) m_server->stop();
    if (m_thread.joinable()) m_thread.join();
  }

  bool ok() const { return m_ok && m_port > 0; }
  int port() const { return m_port; }
  std::string url() const { return "https://127.0.0.1:" + std::to_string(m_port); }
  std::string ca_file() const { return (m_dir / "ca.crt").string(); }
  // A token file the stand-in accepts.
  std::string token_file(const std::string& token) {
    std::lock_guard<std::mutex> lock(m_mu);
    m_tokens.insert(token);
    auto path = m_dir / ("token-" + token);
    std::ofstream(path) << token << "\n";
    return path.string();
  }
  // The `kubernetes:` section of a flytecd configuration that reaches this stand-in with
  // `token` in namespace flytecd; the caller appends the features it turns on.
  std::string config_section(const std::string& token) {
    return "kubernetes:\n  apiServer: " + url() + "\n  caFile: " + ca_file() +
           "\n  tokenFile: " + token_file(token) + "\n  namespace: flytecd\n";
  }
  void block(const std::string& token, bool blocked) {
    std::lock_guard<std::mutex> lock(m_mu);
    if (blocked)
      m_blocked.insert(token);
    else
      m_blocked.erase(token);
  }
  void add_deployment(const std::string& ns, const std::string& name) {
    std::lock_guard<std::mutex> lock(m_mu);
    m_deployments[ns + "/" + name] = nlohmann::json::object();
  }
  nlohmann::json lease(const std::string& ns, const std::string& name) {
    std::lock_guard<std::mutex> lock(m_mu);
    auto it = m_leases.find(ns + "/" + name);
    return it == m_leases.end() ? nlohmann::json() : it->second;
  }
  std::vector<LeaseWrite> lease_writes() {
    std::lock_guard<std::mutex> lock(m_mu);
    return m_lease_writes;
  }
  size_t conflicts() {
    std::lock_guard<std::mutex> lock(m_mu);
    return m_conflicts;
  }
  std::vector<Applied> applied() {
    std::lock_guard<std::mutex> lock(m_mu);
    return m_applied;
  }
  // Events posted so far (core/v1 Event objects as received), oldest first.
  std::vector<nlohmann::json> events() {
    std::lock_guard<std::mutex> lock(m_mu);
    return m_events;
  }
  // Successful ConfigMap creates and updates by POST/PUT (not server-side apply).
  size_t configmap_writes() {
    std::lock_guard<std::mutex> lock(m_mu);
    return m_cm_writes;
  }
  nlohmann::json configmap(const std::string& ns, const std::string& name) {
    std::lock_guard<std::mutex> lock(m_mu);
    auto it = m_configmaps.find(ns + "/" + name);
    return it == m_configmaps.end() ? nlohmann::json() : it->second;
  }
  // The pod-template annotations of a Deployment after the patches received so far.
  nlohmann::json template_annotations(const std::string& ns, const std::string& name) {
    std::lock_guard<std::mutex> lock(m_mu);
    return m_deployments[ns + "/" + name];
  }

 private:
  static void status(httplib::Response& res, int code, const std::string& reason,
                     const std::string& message) {
    res.status = code;
    res.set_content(nlohmann::json{{"kind", "Status"},
                                   {"apiVersion", "v1"},
                                   {"status", "Failure"},
                                   {"reason", reason},
                                   {"message", message},
                                   {"code", code}}
                        .dump(),
                    "application/json");
  }
  // Returns false (and answers) when the request may not proceed.
  bool admit(const httplib::Request& req, httplib::Response& res) {
    const std::string auth = req.get_header_value("Authorization");
    const std::string token = auth.rfind("Bearer ", 0) == 0 ? auth.substr(7) : "";
    if (!m_tokens.count(token)) {
      status(res, 401, "Unauthorized", "Unauthorized");
      return false;
    }
    if (m_blocked.count(token)) {
      status(res, 503, "ServiceUnavailable", "stand-in: blocked for this client");
      return false;
    }
    return true;
  }

  void routes() {
    const std::string lease_re = R"(/apis/coordination\.k8s\.io/v1/namespaces/([^/]+)/leases)";
    m_server->Get(
        lease_re + "/([^/]+)", [this](const httplib::Request& req, httplib::Response& res) {
          std::lock_guard<std::mutex> lock(m_mu);
          if (!admit(req, res)) return;
          auto it = m_leases.find(std::string(req.matches[1]) + "/" + std::string(req.matches[2]));
          if (it == m_leases.end()) return status(res, 404, "NotFound", "leases not found");
          res.set_content(it->second.dump(), "application/json");
        });
    m_server->Post(lease_re, [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(m_mu);
      if (!admit(req, res)) return;
      auto obj = nlohmann::json::parse(req.body, nullptr, false);
      if (!obj.is_object()) return status(res, 400, "BadRequest", "not JSON");
      const std::string key =
          std::string(req.matches[1]) + "/" + obj["metadata"]["name"].get<std::string>();
      if (m_leases.count(key)) {
        ++m_conflicts;
        return status(res, 409, "AlreadyExists", "leases already exists");
      }
      obj["metadata"]["resourceVersion"] = std::to_string(++m_rv);
      m_leases[key] = obj;
      m_lease_writes.push_back(
          {obj["spec"].value("holderIdentity", ""), obj["spec"].value("leaseTransitions", 0)});
      res.status = 201;
      res.set_content(obj.dump(), "application/json");
    });
    m_server->Put(
        lease_re + "/([^/]+)", [this](const httplib::Request& req, httplib::Response& res) {
          std::lock_guard<std::mutex> lock(m_mu);
          if (!admit(req, res)) return;
          auto it = m_leases.find(std::string(req.matches[1]) + "/" + std::string(req.matches[2]));
          if (it == m_leases.end()) return status(res, 404, "NotFound", "leases not found");
          auto obj = nlohmann::json::parse(req.body, nullptr, false);
          if (!obj.is_object()) return status(res, 400, "BadRequest", "not JSON");
          if (obj["metadata"].value("resourceVersion", "") !=
              it->second["metadata"]["resourceVersion"].get<std::string>()) {
            ++m_conflicts;
            return status(res, 409, "Conflict",
                          "Operation cannot be fulfilled on leases: the object has been modified");
          }
          obj["metadata"]["resourceVersion"] = std::to_string(++m_rv);
          it->second = obj;
          m_lease_writes.push_back(
              {obj["spec"].value("holderIdentity", ""), obj["spec"].value("leaseTransitions", 0)});
          res.set_content(obj.dump(), "application/json");
        });
    const std::string cm_re = R"(/api/v1/namespaces/([^/]+)/configmaps/([^/]+))";
    m_server->Get(cm_re, [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(m_mu);
      if (!admit(req, res)) return;
      auto it = m_configmaps.find(std::string(req.matches[1]) + "/" + std::string(req.matches[2]));
      if (it == m_configmaps.end()) return status(res, 404, "NotFound", "configmaps not found");
      res.set_content(it->second.dump(), "application/json");
    });
    const std::string cms_re = R"(/api/v1/namespaces/([^/]+)/configmaps)";
    m_server->Post(cms_re, [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(m_mu);
      if (!admit(req, res)) return;
      auto obj = nlohmann::json::parse(req.body, nullptr, false);
      if (!obj.is_object() || !obj.contains("metadata") || !obj["metadata"].contains("name"))
        return status(res, 400, "BadRequest", "not a ConfigMap");
      const std::string name = obj["metadata"]["name"].get<std::string>();
      const std::string key = std::string(req.matches[1]) + "/" + name;
      if (m_configmaps.count(key)) {
        ++m_conflicts;
        return status(res, 409, "AlreadyExists", "configmaps \"" + name + "\" already exists");
      }
      if (obj["metadata"].contains("resourceVersion"))
        return status(res, 400, "BadRequest",
                      "resourceVersion should not be set on objects to be created");
      obj["metadata"]["resourceVersion"] = std::to_string(++m_rv);
      obj["metadata"]["uid"] = "uid-" + std::to_string(m_rv);
      m_configmaps[key] = obj;
      ++m_cm_writes;
      res.status = 201;
      res.set_content(obj.dump(), "application/json");
    });
    m_server->Put(cm_re, [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(m_mu);
      if (!admit(req, res)) return;
      const std::string name = req.matches[2];
      auto it = m_configmaps.find(std::string(req.matches[1]) + "/" + name);
      if (it == m_configmaps.end())
        return status(res, 404, "NotFound", "configmaps \"" + name + "\" not found");
      auto obj = nlohmann::json::parse(req.body, nullptr, false);
      if (!obj.is_object() || !obj.contains("metadata"))
        return status(res, 400, "BadRequest", "not a ConfigMap");
      const std::string rv = obj["metadata"].value("resourceVersion", "");
      if (!rv.empty() && rv != it->second["metadata"]["resourceVersion"].get<std::string>()) {
        ++m_conflicts;
        return status(res, 409, "Conflict",
                      "Operation cannot be fulfilled on configmaps \"" + name +
                          "\": the object has been modified; please apply your changes to the "
                          "latest version and try again");
      }
      obj["metadata"]["resourceVersion"] = std::to_string(++m_rv);
      obj["metadata"]["uid"] = it->second["metadata"].value("uid", "");
      it->second = obj;
      ++m_cm_writes;
      res.set_content(obj.dump(), "application/json");
    });
    m_server->Post(R"(/api/v1/namespaces/([^/]+)/events)",
                   [this](const httplib::Request& req, httplib::Response& res) {
                     std::lock_guard<std::mutex> lock(m_mu);
                     if (!admit(req, res)) return;
                     auto obj = nlohmann::json::parse(req.body, nullptr, false);
                     if (!obj.is_object() || obj.value("kind", "") != "Event")
                       return status(res, 400, "BadRequest", "not an Event");
                     if (obj["metadata"].value("namespace", "") != std::string(req.matches[1]))
                       return status(res, 400, "BadRequest",
                                     "the namespace of the object does not match the request");
                     obj["metadata"]["resourceVersion"] = std::to_string(++m_rv);
                     m_events.push_back(obj);
                     res.status = 201;
                     res.set_content(obj.dump(), "application/json");
                   });
    m_server->Patch(cm_re, [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(m_mu);
      if (!admit(req, res)) return;
      record(req);
      if (req.get_header_value("Content-Type") != "application/apply-patch+yaml")
        return status(res, 415, "UnsupportedMediaType", "expected server-side apply");
      if (!req.has_param("fieldManager"))
        return status(res, 422, "Invalid", "fieldManager is required for apply");
      // JSON is YAML: flytecd sends JSON, which is all this stand-in parses.
      auto obj = nlohmann::json::parse(req.body, nullptr, false);
      if (!obj.is_object()) return status(res, 400, "BadRequest", "not JSON");
      const std::string key = std::string(req.matches[1]) + "/" + std::string(req.matches[2]);
      auto& stored = m_configmaps[key];
      const bool created = stored.is_null();
      obj["metadata"]["resourceVersion"] = std::to_string(++m_rv);
      obj["metadata"]["uid"] =
          created ? "uid-" + std::to_string(m_rv) : stored["metadata"].value("uid", std::string());
      stored = obj;
      res.status = created ? 201 : 200;
      res.set_content(stored.dump(), "application/json");
    });
    m_server->Patch(R"(/apis/apps/v1/namespaces/([^/]+)/deployments/([^/]+))",
                    [this](const httplib::Request& req, httplib::Response& res) {
                      std::lock_guard<std::mutex> lock(m_mu);
                      if (!admit(req, res)) return;
                      record(req);
                      const std::string key =
                          std::string(req.matches[1]) + "/" + std::string(req.matches[2]);
                      auto it = m_deployments.find(key);
                      if (it == m_deployments.end())
                        return status(res, 404, "NotFound", "deployments not found");
                      auto patch = nlohmann::json::parse(req.body, nullptr, false);
                      auto ann = patch.value("/spec/template/metadata/annotations"_json_pointer,
                                             nlohmann::json::object());
                      for (auto a = ann.begin(); a != ann.end(); ++a) it->second[a.key()] = *a;
                      res.set_content(R"({"kind":"Deployment"})", "application/json");
                    });
  }
  void record(const httplib::Request& req) {
    m_applied.push_back({req.method, req.path, req.get_header_value("Content-Type"),
                         req.get_param_value("fieldManager"), req.get_param_value("force"),
                         req.body});
  }

  std::filesystem::path m_dir;
  bool m_ok = false;
  int m_port = -1;
  std::unique_ptr<httplib::SSLServer> m_server;
  std::thread m_thread;
  std::mutex m_mu;
  std::set<std::string> m_tokens, m_blocked;
  std::map<std::string, nlohmann::json> m_leases, m_configmaps, m_deployments;
  std::vector<LeaseWrite> m_lease_writes;
  std::vector<Applied> m_applied;
  std::vector<nlohmann::json> m_events;
  size_t m_conflicts = 0, m_cm_writes = 0;
  long m_rv = 100;
};

}  // namespace flytecd::testing
