// /make: start or continue a chat with Petals' agent, and follow its run with
// EventSource: the stored events (replayed), the live marker, then live
// events. An event is shown once, by its seq, however often the stream
// reconnects or the page reloads.
'use strict';
(function () {
  var root = document.getElementById('make');
  var log = document.getElementById('log');
  var statusEl = document.getElementById('status');
  var liveEl = document.getElementById('live');
  var form = document.getElementById('chat');
  var ask = document.getElementById('ask');
  var send = document.getElementById('send');
  var stopBtn = document.getElementById('stop');
  var runId = root.dataset.run || '';
  var asked = [];
  try { asked = JSON.parse(root.dataset.asked || '[]') || []; } catch (e) { asked = []; }
  var shownAsks = 0;
  var lastSeq = -1;
  var source = null;
  var running = false;
  var caughtUp = false; // the live marker came: what follows happens now
  var ended = false;    // the last event shown ends the run (done, interrupted)
  var SVG = 'http://www.w3.org/2000/svg';

  // A site path in a message (/connect, /skill.md) becomes a link to it;
  // everything else stays text.
  // An instant (2026-11-01T12:00:00Z) shows as a person writes it, the
  // exact time on hover.
  var PATH = /(^|[\s(“"'])(\/[a-z][a-z0-9._\/-]*[a-z0-9])|(\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:\d\d))/g;
  var MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  function timeEl(iso) {
    var d = new Date(iso);
    if (isNaN(d.getTime())) return document.createTextNode(iso);
    var t = el('time', '', d.getUTCDate() + ' ' + MONTHS[d.getUTCMonth()] + ' ' + d.getUTCFullYear());
    t.setAttribute('datetime', iso);
    t.title = d.toUTCString().replace('GMT', 'UTC');
    return t;
  }
  function linked(parent, text) {
    text = String(text || '');
    var last = 0, m;
    PATH.lastIndex = 0;
    while ((m = PATH.exec(text)) !== null) {
      if (m[3]) {
        parent.appendChild(document.createTextNode(text.slice(last, m.index)));
        parent.appendChild(timeEl(m[3]));
        last = m.index + m[3].length;
        continue;
      }
      var at = m.index + m[1].length;
      parent.appendChild(document.createTextNode(text.slice(last, at)));
      var a = document.createElement('a');
      a.href = m[2];
      a.textContent = m[2];
      parent.appendChild(a);
      last = at + m[2].length;
    }
    parent.appendChild(document.createTextNode(text.slice(last)));
    return parent;
  }
  function say(text, bad) {
    statusEl.textContent = '';
    linked(statusEl, text);
    statusEl.className = bad ? 'status bad' : 'status';
  }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function item(kind, seq) {
    var li = el('li', 'ev ev-' + kind);
    if (seq !== null) li.dataset.seq = String(seq);
    log.appendChild(li);
    return li;
  }
  function setRunning(on) {
    running = on;
    stopBtn.hidden = !on;
    send.disabled = on;
  }

  function showAsk() {
    if (shownAsks >= asked.length) return;
    var li = item('you', null);
    li.appendChild(el('span', 'visually-hidden', 'You: '));
    li.appendChild(document.createTextNode(asked[shownAsks]));
    shownAsks++;
  }

  function drawFlower(li, f) {
    var fig = el('figure', 'flower');
    li.appendChild(fig);
    var holder = el('div', 'flower-picture');
    fig.appendChild(holder);
    var cap = el('figcaption');
    cap.appendChild(el('span', '', f.interpretation || ''));
    fig.appendChild(cap);
    if (f.legend && f.legend.length) {
      var ul = el('ul', 'legend');
      ul.setAttribute('aria-label', 'Legend');
      f.legend.forEach(function (k) {
        var row = el('li');
        var sw = document.createElementNS(SVG, 'svg');
        sw.setAttribute('class', 'swatch');
        sw.setAttribute('width', '14'); sw.setAttribute('height', '14');
        sw.setAttribute('aria-hidden', 'true');
        var r = document.createElementNS(SVG, 'rect');
        r.setAttribute('width', '14'); r.setAttribute('height', '14'); r.setAttribute('rx', '3');
        r.setAttribute('fill', String(k.swatch || ''));
        sw.appendChild(r);
        row.appendChild(sw);
        row.appendChild(document.createTextNode(String(k.label || '')));
        ul.appendChild(row);
      });
      fig.appendChild(ul);
    }
    if (f.view_url) {
      var p = el('p');
      var a = el('a', '', 'Open the draft');
      a.href = f.view_url;
      p.appendChild(a);
      fig.appendChild(p);
    }
    // The picture itself, drawn by render_flower as the API draws it.
    fetch('/api/v1/render?format=svg', {
      method: 'POST', headers: { 'Content-Type': 'application/json', 'Accept': 'image/svg+xml' },
      body: JSON.stringify({ spec: f.spec })
    }).then(function (res) {
      if (!res.ok) throw new Error('the picture could not be drawn (' + res.status + ')');
      return res.text();
    }).then(function (text) {
      var doc = new DOMParser().parseFromString(text, 'image/svg+xml');
      var svg = doc.documentElement;
      if (!svg || svg.nodeName !== 'svg') throw new Error('the picture could not be read');
      // Each flower's title and description keep ids of their own, so a
      // second flower on the page is not named by the first's.
      var suffix = '-' + (li.dataset.seq || String(Date.now()));
      var labelled = [];
      Array.prototype.forEach.call(svg.querySelectorAll('title[id], desc[id]'), function (n) {
        n.id = n.id + suffix;
        labelled.push(n.id);
      });
      if (labelled.length) svg.setAttribute('aria-labelledby', labelled.join(' '));
      var shown = holder.appendChild(document.importNode(svg, true));
      if (window.petalFlower) window.petalFlower(shown);
    }).catch(function (err) { holder.appendChild(el('p', 'problem', String(err.message || err))); });
  }

  function show(kind, seq, d) {
    var li;
    switch (kind) {
      case 'run':
        showAsk();
        return;
      case 'stage':
        item(kind, seq).textContent = d.message || d.stage || '';
        return;
      case 'progress':
        item(kind, seq).textContent = d.message || '';
        return;
      case 'tool_call':
        li = item(kind, seq);
        var det = el('details');
        det.appendChild(el('summary', '', 'Calling ' + (d.name || 'a tool')));
        det.appendChild(el('pre', '', JSON.stringify(d.args, null, 2)));
        li.appendChild(det);
        return;
      case 'tool_result':
        linked(item(kind, seq), (d.ok ? '✓ ' : '✗ ') + (d.name || '') + ': ' + (d.summary || '') +
          (typeof d.ms === 'number' ? ' (' + d.ms + ' ms)' : ''));
        return;
      case 'message':
        li = item(kind, seq);
        li.appendChild(el('span', 'visually-hidden', 'Petal: '));
        linked(li, d.text || '');
        return;
      case 'approval_required':
        // The contract's chip: "Yes" goes as an ordinary message.
        li = item(kind, seq);
        li.appendChild(el('span', '', 'Petal asks before reading ' + (d.network || 'a new map') + '. '));
        ['Yes', 'No'].forEach(function (answer) {
          var b = el('button', 'chip', answer);
          b.type = 'button';
          b.addEventListener('click', function () {
            if (running) return;
            ask.value = answer;
            form.requestSubmit();
          });
          li.appendChild(b);
          li.appendChild(document.createTextNode(' '));
        });
        return;
      case 'flower':
        drawFlower(item(kind, seq), d);
        return;
      case 'title':
        item(kind, seq).textContent = 'Named “' + (d.title || '') + '”';
        document.getElementById('run-title').textContent = d.title || '';
        document.title = (d.title || 'Make a flower') + ' · Petal';
        return;
      case 'job':
        item(kind, seq).textContent = 'Handed a job to your agent: ' + (d.title || '');
        return;
      case 'signature':
        item(kind, seq).textContent = 'Signed by the model' + (d.model ? ' (' + d.model + ')' : '');
        return;
      case 'error':
        // The run's own words are for programs ("send a message with this
        // run_id"); a person is told what to do here.
        if (d.code === 'stopped') {
          item(kind, seq).textContent = 'You stopped this run. Write below to carry on from where it stopped.';
        } else if (d.code === 'interrupted') {
          item(kind, seq).textContent = (d.message || 'The run was interrupted') + '. Write below to carry on from where it was.';
        } else {
          linked(item(kind, seq), (d.message || 'Something went wrong') + (d.hint ? ' — ' + d.hint : ''));
        }
        if (d.code === 'interrupted') { ended = true; if (caughtUp) finish('The run was interrupted.'); }
        return;
      case 'done':
        // A run's earlier chats each end with done too: only one that comes
        // after the live marker (or the last one replayed) ends the page's run.
        item(kind, seq).textContent = 'Done.';
        ended = true;
        if (caughtUp) finish('');
        return;
    }
  }

  function finish(text) {
    if (source) { source.close(); source = null; }
    liveEl.hidden = true;
    setRunning(false);
    say(text);
  }

  // A stream that ends says nothing of how the run ended: read the run.
  function checkRun() {
    fetch('/api/v1/agent/runs/' + encodeURIComponent(runId) + '?limit=1', { headers: { 'Accept': 'application/json' } })
      .then(function (res) { return res.ok ? res.json() : null; })
      .then(function (run) {
        if (run && run.status !== 'running') finish(ENDED[run.status] || 'The run has ended.');
      }).catch(function () {});
  }

  var ENDED = { done: 'The run has finished.', stopped: 'The run was stopped.', failed: 'The run failed; see its last message above.',
    interrupted: 'The run was interrupted. Write below to carry on.' };

  var kinds = ['run', 'stage', 'progress', 'tool_call', 'tool_result', 'message', 'approval_required',
    'flower', 'title', 'job', 'signature', 'error', 'done'];

  function follow(from) {
    if (source) source.close();
    caughtUp = false;
    ended = false;
    setRunning(true);
    var es = new EventSource('/api/v1/agent/runs/' + encodeURIComponent(runId) + '?from=' + from);
    source = es;
    kinds.forEach(function (kind) {
      es.addEventListener(kind, function (ev) {
        if (ev.data === undefined) return; // the connection's own error, not the run's
        var seq = parseInt(ev.lastEventId, 10);
        if (!isNaN(seq)) {
          if (seq <= lastSeq) return; // seen already
          lastSeq = seq;
        }
        var d = {};
        try { d = JSON.parse(ev.data); } catch (e) { d = {}; }
        if (kind !== 'done' && kind !== 'error') ended = false;
        show(kind, isNaN(seq) ? null : seq, d);
      });
    });
    es.addEventListener('live', function () {
      caughtUp = true;
      root.dataset.caughtUp = 'yes';
      if (ended) { finish(''); return; }
      liveEl.hidden = false;
    });
    es.onerror = function () {
      if (source !== es) return;
      if (es.readyState === EventSource.CLOSED) {
        source = null;
        setRunning(false);
        say('The run could not be followed; reload the page to try again.', true);
        return;
      }
      checkRun(); // EventSource tries again by itself meanwhile
    };
  }

  function refused(res) {
    return res.json().catch(function () { return {}; }).then(function (b) {
      var e = (b && b.error) || {};
      var text = (e.message || ('the server answered ' + res.status)) + (e.hint ? ' — ' + e.hint : '');
      if ((e.code === 'invite_required' || e.code === 'payment_required' || e.code === 'not_on_this_site') && text.indexOf('/connect') < 0) {
        text += '. See /connect';
      }
      say(text, true);
    });
  }

  form.addEventListener('submit', function (e) {
    e.preventDefault();
    var text = ask.value.trim();
    if (!text) return;
    var body = { messages: [{ role: 'user', content: text }] };
    if (runId) body.run_id = runId;
    send.disabled = true;
    say('Sending…');
    fetch('/api/v1/agent/chat', {
      method: 'POST', headers: { 'Content-Type': 'application/json', 'Accept': 'application/json' },
      body: JSON.stringify(body)
    }).then(function (res) {
      if (!res.ok) { send.disabled = false; return refused(res); }
      return res.json().then(function (started) {
        ask.value = '';
        say('');
        asked.push(text);
        if (!runId) {
          runId = started.run_id;
          root.dataset.run = runId;
          history.replaceState(null, '', '/make?run=' + encodeURIComponent(runId));
          document.querySelector('label[for="ask"]').textContent = 'Continue the conversation';
        }
        follow(lastSeq + 1);
      });
    }).catch(function (err) { send.disabled = false; say(String(err.message || err), true); });
  });

  stopBtn.addEventListener('click', function () {
    if (!runId) return;
    stopBtn.disabled = true;
    fetch('/api/v1/agent/runs/' + encodeURIComponent(runId) + '/stop', { method: 'POST', headers: { 'Accept': 'application/json' } })
      .then(function (res) { return res.ok ? null : refused(res); })
      .finally(function () { stopBtn.disabled = false; });
  });

  if (runId) follow(0);
})();
