// flytecd's read-only page: refreshes the server-rendered views (daemon/run/page.cpp, the same
// structure) from GET /api/v1/status and /api/v1/history every few seconds, and filters the
// objects table from the query string (?project=&domain=&kind=&state=, kept shareable in the
// URL). Every value is inserted as text (textContent, text nodes), never as HTML; the page
// changes no state (GET only).
(function () {
  'use strict';
  var REFRESH_MS = 5000;
  var MAX_ROWS = 500;
  var FILTERS = ['project', 'domain', 'kind', 'state'];
  var last = null; // the last status answer
  var query = readQuery();

  function readQuery() {
    var p = new URLSearchParams(window.location.search);
    var q = {};
    FILTERS.forEach(function (f) { q[f] = p.get(f) || ''; });
    return q;
  }

  function el(tag, cls, text) {
    var n = document.createElement(tag);
    if (cls) n.className = cls;
    if (text !== undefined && text !== null) n.textContent = String(text);
    return n;
  }

  function add(parent) {
    for (var i = 1; i < arguments.length; i++) {
      var c = arguments[i];
      if (c === null || c === undefined) continue;
      parent.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
    }
    return parent;
  }

  // A member as text: strings as they are, other values as JSON, null or absent as ''.
  function str(o, k) {
    if (!o || typeof o !== 'object') return '';
    var v = o[k];
    if (v === null || v === undefined) return '';
    return typeof v === 'string' ? v : JSON.stringify(v);
  }

  function side(c, k) {
    var v = c ? c[k] : null;
    if (v === null || v === undefined) return '(unset)';
    if (typeof v === 'string' && c.elided === true) return v;
    return JSON.stringify(v);
  }

  function badge(word) { return el('span', 'badge b-' + word, word); }

  function shortRev(rev) {
    var commit = /^[0-9a-f]{40}$/.test(rev);
    var c = el('code', null, commit ? rev.slice(0, 12) : rev);
    c.title = rev;
    return c;
  }

  function changesTable(changes, liveLabel) {
    if (!Array.isArray(changes) || changes.length === 0) return null;
    var t = el('table', 'diff');
    var hr = el('tr');
    ['field', liveLabel, 'Git', 'Git value at'].forEach(function (h) { add(hr, el('th', null, h)); });
    add(t, add(el('thead'), hr));
    var body = el('tbody');
    changes.forEach(function (c) {
      add(body, add(el('tr'), add(el('td'), el('code', null, str(c, 'path'))),
        el('td', 'live', side(c, 'live')), el('td', 'git', side(c, 'git')),
        el('td', null, str(c, 'source'))));
    });
    return add(t, body);
  }

  function leaderText(l) {
    if (!l || l.enabled !== true) return 'no leader election: this replica reconciles';
    var out = l.isLeader === true ? 'this replica (' + str(l, 'identity') + ') leads'
      : 'follower; the leader is ' + str(l, 'leader');
    if (str(l, 'lease')) out += ', lease ' + str(l, 'lease');
    if (str(l, 'error')) out += '; error: ' + str(l, 'error');
    return out;
  }

  function fact(dl, label) {
    var dd = el('dd');
    for (var i = 2; i < arguments.length; i++) add(dd, arguments[i]);
    add(dl, el('dt', null, label), dd);
  }

  function lastPass(p) {
    var out = document.createDocumentFragment();
    if (!p || typeof p !== 'object') return add(out, 'no pass has finished yet');
    add(out, badge(str(p, 'outcome') || 'unknown'));
    if (str(p, 'mode') === 'plan') add(out, ' planned only (suspended)');
    add(out, ' ' + str(p, 'time') + ' · trigger ' + str(p, 'reason') + ' · revision ',
      shortRev(str(p, 'revision')));
    if (str(p, 'summary')) add(out, el('br'), el('span', 'muted', str(p, 'summary')));
    if (str(p, 'error')) add(out, el('p', 'error', str(p, 'error')));
    return out;
  }

  function overview(st) {
    var dl = el('dl', 'facts');
    if (str(st, 'revision')) {
      fact(dl, 'Revision', el('code', 'rev', str(st, 'revision')), ' ',
        el('span', 'subject', str(st, 'subject')), el('br'),
        el('span', 'muted', 'by ' + str(st, 'author') + ' · committed ' + str(st, 'committedAt')));
    } else {
      fact(dl, 'Revision', 'no revision loaded yet');
    }
    var serr = str(st, 'sourceError');
    fact(dl, 'Source', str(st, 'source') + ' ', badge(serr ? 'failing' : 'healthy'),
      serr ? el('p', 'error', serr) : null);
    fact(dl, 'Target', str(st, 'target'), st.targetIsEmulator === true ? ' ' : null,
      st.targetIsEmulator === true ? badge('emulator') : null);
    fact(dl, 'Leader', leaderText(st.leader));
    var s = st.suspended;
    if (s && typeof s === 'object') {
      fact(dl, 'Suspended', badge('suspended'), ' since ' + str(s, 'since') + ' by ' + str(s, 'by') +
        (str(s, 'reason') ? ': ' + str(s, 'reason') : ''));
    } else {
      fact(dl, 'Suspended', badge('no'));
    }
    fact(dl, 'Last pass', lastPass(st.lastSync));
    if (str(st, 'lastError')) fact(dl, 'Last error', el('span', 'error', str(st, 'lastError')));
    if (str(st, 'lastReloadError')) {
      fact(dl, 'Configuration', el('span', 'error', 'reload failed: ' + str(st, 'lastReloadError')));
    }
    var own = st.ownership;
    if (own && typeof own === 'object' && str(own, 'state') !== 'ledger') {
      fact(dl, 'Ownership', str(own, 'state') + ': ' + str(own, 'message'));
    }
    var counts = el('ul', 'counts');
    [['managed', 'managed'], ['inSync', 'in sync'], ['drifted', 'drifted'],
      ['unmanaged', 'unmanaged'], ['failedRegistrations', 'failed registrations']]
      .forEach(function (c) {
        add(counts, add(el('li', 'c-' + c[0]), el('b', null, str(st.counts, c[0]) || '0'),
          ' ' + c[1]));
      });
    var out = add(document.createDocumentFragment(), dl, counts);
    var r = st.rejectedRevision;
    if (r && typeof r === 'object') {
      var ul = el('ul', 'errors');
      (Array.isArray(r.errors) ? r.errors : []).forEach(function (e) {
        add(ul, add(el('li'), el('code', null, typeof e === 'string' ? e : JSON.stringify(e))));
      });
      add(out, add(el('div', 'alert'), add(el('p'), 'Revision ', shortRev(str(r, 'revision')),
        ' was rejected whole at ' + str(r, 'time') + '; the revision in force stays. Errors:'), ul));
    }
    return out;
  }

  // "project/ml" and "override/P/D/W/TYPE", as page.cpp's object_name.
  function objectName(key) {
    var p = key.split('/');
    if (p.length === 2 && p[0] === 'project') return { kind: 'project', project: p[1], domain: '', workflow: '' };
    if (p.length === 5 && p[0] === 'override') return { kind: p[4], project: p[1], domain: p[2], workflow: p[3] };
    return { kind: p[0], project: '', domain: '', workflow: '' };
  }

  function objectRows(st) {
    var drift = {};
    (Array.isArray(st.drift) ? st.drift : []).forEach(function (d) {
      var k = str(d, 'key');
      if (k.indexOf('registration') !== 0 && !(k in drift)) drift[k] = d;
    });
    var rows = [];
    var listed = {};
    (Array.isArray(st.objects) ? st.objects : []).forEach(function (o) {
      var r = { key: str(o, 'key'), state: str(o, 'state'), detail: str(o, 'error'), drift: null };
      if (r.key in drift) {
        r.drift = drift[r.key];
        if (!r.detail) r.detail = str(r.drift, 'detail');
      }
      listed[r.key] = true;
      rows.push(r);
    });
    Object.keys(drift).sort().forEach(function (k) {
      if (!listed[k]) rows.push({ key: k, state: 'drifted', detail: str(drift[k], 'detail'), drift: drift[k] });
    });
    return rows;
  }

  function matches(n, state) {
    return (!query.project || query.project === n.project) &&
      (!query.domain || query.domain === n.domain) && (!query.kind || query.kind === n.kind) &&
      (!query.state || query.state === state);
  }

  function select(name, label, values, chosen) {
    var s = el('select');
    s.name = name;
    var all = Object.keys(values);
    if (chosen && !(chosen in values)) all.push(chosen);
    all.sort();
    var none = el('option', null, 'all');
    none.value = '';
    add(s, none);
    all.forEach(function (v) {
      var o = el('option', null, v);
      o.value = v;
      if (v === chosen) o.defaultSelected = true; // the attribute: the form reads the same
      add(s, o);
    });
    return add(el('label'), label + ' ', s);
  }

  function objectsView(st) {
    var rows = objectRows(st);
    var sets = { project: {}, domain: {}, kind: {}, state: {} };
    rows.forEach(function (r) {
      var n = objectName(r.key);
      if (n.project) sets.project[n.project] = true;
      if (n.domain) sets.domain[n.domain] = true;
      sets.kind[n.kind] = true;
      sets.state[r.state] = true;
    });
    var form = el('form');
    form.id = 'filters';
    form.method = 'get';
    form.action = '/';
    var submit = el('button', null, 'Filter');
    submit.type = 'submit';
    var clear = el('a', null, 'clear');
    clear.href = '/';
    add(form, select('project', 'Project', sets.project, query.project),
      select('domain', 'Domain', sets.domain, query.domain),
      select('kind', 'Kind', sets.kind, query.kind),
      select('state', 'State', sets.state, query.state), submit, ' ', clear);
    var table = el('table', 'objects');
    var hr = el('tr');
    ['State', 'Kind', 'Project', 'Domain', 'Workflow', 'Detail'].forEach(function (h) { add(hr, el('th', null, h)); });
    add(table, add(el('thead'), hr));
    var body = el('tbody');
    body.id = 'objects-body';
    var shown = 0;
    var matched = 0;
    rows.forEach(function (r) {
      var n = objectName(r.key);
      if (!matches(n, r.state)) return;
      if (++matched > MAX_ROWS) return;
      ++shown;
      var detail = el('td');
      var changes = r.drift ? r.drift.changes : null;
      if (Array.isArray(changes) && changes.length > 0) {
        var d = el('details');
        d.setAttribute('data-key', 'o ' + r.key);
        d.open = query.state === 'drifted'; // asked for drifted objects: their diffs, open
        add(detail, add(d, el('summary', null, r.detail), changesTable(changes, 'live')));
      } else {
        detail.textContent = r.detail;
      }
      var tr = el('tr', 's-' + r.state);
      tr.title = r.key;
      add(body, add(tr, add(el('td'), badge(r.state)), el('td', null, n.kind),
        el('td', null, n.project), el('td', null, n.domain), el('td', null, n.workflow), detail));
    });
    add(table, body);
    var count = el('p', 'muted', shown + ' of ' + rows.length + ' objects shown' +
      (matched > shown ? ' (' + (matched - shown) + ' more match: narrow the filters)' : ''));
    count.id = 'objects-count';
    return add(document.createDocumentFragment(), form, table, count);
  }

  function historyView(h, error) {
    var out = document.createDocumentFragment();
    if (error) return add(out, el('p', 'error', error));
    if (!Array.isArray(h) || h.length === 0) return add(out, el('p', 'muted', 'no history yet'));
    h.forEach(function (e) {
      var steps = Array.isArray(e.steps) ? e.steps : [];
      var d = el('details', 'pass');
      d.setAttribute('data-key', 'h ' + str(e, 'id'));
      add(d, add(el('summary'), badge(str(e, 'outcome')), ' ' + str(e, 'time') + ' ',
        shortRev(str(e, 'revision')), ' ', el('span', 'subject', str(e, 'subject')), ' ',
        el('span', 'muted', 'by ' + str(e, 'author') + ' (' + str(e, 'trigger') + ') · ' +
          steps.length + (steps.length === 1 ? ' step' : ' steps'))));
      if (str(e, 'detail')) add(d, el('p', null, str(e, 'detail')));
      var ul = el('ul', 'steps');
      steps.forEach(function (s) {
        add(ul, add(el('li'), badge(str(s, 'outcome')), ' ' + str(s, 'action') + ' ',
          el('code', null, str(s, 'key')), ' ' + str(s, 'message'), changesTable(s.changes, 'before')));
      });
      add(d, ul);
      var noops = str(e, 'noopPassesAfter');
      if (noops && noops !== '0') add(d, el('p', 'muted', 'then ' + noops + ' pass(es) with nothing to do'));
      add(out, d);
    });
    return out;
  }

  function registrationsView(st) {
    var regs = st.registrations;
    if (!Array.isArray(regs) || regs.length === 0) return el('p', 'muted', 'no registrations');
    var table = el('table', 'registrations');
    var hr = el('tr');
    ['Registration', 'Version', 'Package', 'Digest', 'Activation', 'State', 'Last error']
      .forEach(function (h) { add(hr, el('th', null, h)); });
    add(table, add(el('thead'), hr));
    var body = el('tbody');
    regs.forEach(function (r) {
      var err = el('td', null, str(r, 'message'));
      (Array.isArray(r.drift) ? r.drift : []).forEach(function (d) {
        add(err, el('div', 'error', 'changed outside Git: ' + (typeof d === 'string' ? d : JSON.stringify(d))));
      });
      var tr = el('tr');
      tr.title = str(r, 'key');
      add(body, add(tr,
        add(el('td'), str(r, 'project') + '/' + str(r, 'domain') + '/' + str(r, 'name'), el('br'),
          el('span', 'muted', str(r, 'source'))),
        el('td', null, str(r, 'version')), add(el('td'), el('code', null, str(r, 'package'))),
        add(el('td'), el('code', 'digest', str(r, 'digest'))), el('td', null, str(r, 'activate')),
        add(el('td'), badge(str(r, 'state'))), err));
    });
    return add(table, body);
  }

  // Replaces a container's children, keeping open the <details> that were open.
  function replace(id, content) {
    var box = document.getElementById(id);
    if (!box) return;
    var open = {};
    box.querySelectorAll('details[open]').forEach(function (d) { open[d.getAttribute('data-key')] = true; });
    box.replaceChildren(content);
    box.querySelectorAll('details').forEach(function (d) {
      if (open[d.getAttribute('data-key')]) d.open = true;
    });
  }

  function renderObjects() {
    if (last) replace('objects-view', objectsView(last));
  }

  function setQuery(next) {
    query = next;
    var p = new URLSearchParams();
    FILTERS.forEach(function (f) { if (query[f]) p.set(f, query[f]); });
    var qs = p.toString();
    window.history.replaceState(null, '', qs ? '?' + qs : window.location.pathname);
    renderObjects();
  }

  function getJson(url) {
    return fetch(url, { cache: 'no-store', credentials: 'same-origin' }).then(function (r) {
      if (!r.ok) return r.text().then(function (t) { throw new Error(url + ': HTTP ' + r.status + ' ' + t.trim()); });
      return r.json();
    });
  }

  function note(text) { document.getElementById('refresh').textContent = text; }

  function refresh() {
    var status = getJson('/api/v1/status');
    var hist = getJson('/api/v1/history?limit=20').then(function (h) { return { h: h }; },
      function (e) { return { error: e.message }; });
    Promise.all([status, hist]).then(function (res) {
      last = res[0];
      replace('overview-body', overview(last));
      var form = document.getElementById('filters');
      // Not while a filter is being chosen: the select would close under the user's pointer.
      if (!form || !form.contains(document.activeElement)) renderObjects();
      replace('history-body', historyView(res[1].h, res[1].error));
      replace('registrations-body', registrationsView(last));
      note('updated ' + new Date().toLocaleTimeString() + ' · refreshes every ' + REFRESH_MS / 1000 + ' s');
    }).catch(function (e) {
      note('cannot reach the daemon (' + e.message + '); showing the last answer');
    }).then(function () { window.setTimeout(refresh, REFRESH_MS); });
  }

  var view = document.getElementById('objects-view');
  if (view) {
    view.addEventListener('change', function (ev) {
      var t = ev.target;
      if (t && t.tagName === 'SELECT' && FILTERS.indexOf(t.name) >= 0) {
        var next = {};
        FILTERS.forEach(function (f) { next[f] = query[f]; });
        next[t.name] = t.value;
        setQuery(next);
      }
    });
    view.addEventListener('submit', function (ev) { ev.preventDefault(); });
  }
  refresh();
}());
