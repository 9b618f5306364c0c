// /connect: use an invite; signed in, make an agent link, list the links
// that work (each revocable), and see the agents connected now with the job
// each holds (stop, retry, hand over). Every write goes to the API's own
// routes, from this site's page (the API checks the Origin).
'use strict';
(function () {
  var api = window.petalAPI, el = api.el;
  function $(id) { return document.getElementById(id); }
  function say(id, text, bad) {
    var s = $(id);
    if (!s) return;
    s.textContent = text;
    s.className = bad ? 'status bad' : 'status';
  }

  $('invite-form').addEventListener('submit', function (e) {
    e.preventDefault();
    var token = $('invite').value.trim();
    if (!token) return;
    api.post('/api/v1/auth/invite', { token: token }).then(function (b) {
      var i = b.invite || {};
      say('invite-status', 'The invite is ' + (i.status || 'held') + (i.left_usd !== undefined ? ', $' + i.left_usd + ' left' : '') + '. Chat on /make.');
    }).catch(function (err) { say('invite-status', err.message, true); });
  });

  var linkForm = $('agent-link-form');
  if (!linkForm) return; // not signed in

  function loadLinks() {
    return api.get('/api/v1/agents/link').then(function (b) {
      var ul = $('agent-links');
      ul.textContent = '';
      var links = b.links || [];
      $('agent-links-none').hidden = links.length > 0;
      links.forEach(function (l) {
        var li = el('li');
        li.dataset.link = l.id;
        li.appendChild(el('code', null, l.id));
        li.appendChild(el('span', 'meta', 'made ' + api.when(l.created_at)));
        var revoke = el('button', 'quiet', 'Revoke');
        revoke.type = 'button';
        revoke.setAttribute('aria-label', 'Revoke the agent link ' + l.id);
        revoke.addEventListener('click', function () {
          revoke.disabled = true;
          api.post('/api/v1/agents/link/revoke', { id: l.id }).then(function () {
            say('agent-links-status', 'Revoked ' + l.id + ': an agent waiting with it is refused from its next call.');
            return loadLinks();
          }).catch(function (err) { revoke.disabled = false; say('agent-links-status', err.message, true); });
        });
        li.appendChild(revoke);
        ul.appendChild(li);
      });
    });
  }

  linkForm.addEventListener('submit', function (e) {
    e.preventDefault();
    var out = $('agent-link');
    api.post('/api/v1/agents/link').then(function (b) {
      out.textContent = 'Your agent link (shown once): ' + b.token;
      return loadLinks();
    }).catch(function (err) { out.textContent = err.message; });
  });

  function jobButton(job, label, action, body) {
    var b = el('button', 'quiet', label);
    b.type = 'button';
    b.setAttribute('aria-label', label + ': ' + (job.title || job.id));
    b.addEventListener('click', function () {
      var to = body;
      if (action === 'hand-over') {
        var name = window.prompt('Hand the job over to which agent (its name)?');
        if (!name) return;
        to = { to: name.trim() };
      }
      b.disabled = true;
      api.post('/api/v1/jobs/' + encodeURIComponent(job.id) + '/' + action, to).then(function (r) {
        say('agents-status', (job.title || job.id) + ': ' + ((r.job && r.job.status) || 'done') + '.');
        return loadAgents();
      }).catch(function (err) { b.disabled = false; say('agents-status', err.message, true); });
    });
    return b;
  }

  function loadAgents() {
    return api.get('/api/v1/agents').then(function (b) {
      var ul = $('agents');
      ul.textContent = '';
      var agents = b.agents || [];
      $('agents-none').hidden = agents.length > 0;
      agents.forEach(function (a) {
        var li = el('li');
        li.appendChild(el('strong', null, a.name + (a.worker ? ' (' + a.worker + ')' : '')));
        li.appendChild(el('span', 'meta', (a.waiting ? 'waiting' : 'busy') + ', seen ' + api.when(a.last_seen) + (a.can ? ', can ' + a.can : '')));
        if (a.job) {
          li.appendChild(el('span', null, 'holds “' + (a.job.title || a.job.id) + '”'));
          li.appendChild(jobButton(a.job, 'Stop', 'stop'));
          li.appendChild(jobButton(a.job, 'Retry', 'retry'));
          li.appendChild(jobButton(a.job, 'Hand over', 'hand-over'));
        }
        ul.appendChild(li);
      });
    });
  }

  loadLinks().catch(function (err) { say('agent-links-status', err.message, true); });
  loadAgents().catch(function (err) { say('agents-status', err.message, true); });
})();
