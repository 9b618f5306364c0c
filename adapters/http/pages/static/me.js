// /me: a signed-in person's own page, all through the API's own routes
// (GET /api/v1/me, /me/usage, /me/tip, /me/view, /me/profile, /pay,
// /pay/tokens, /pay/intents), so every rule stays the API's.
'use strict';
(function () {
  var api = window.petalAPI, el = api.el;
  var me = null;
  function $(id) { return document.getElementById(id); }
  function say(id, text, bad) {
    var s = $(id);
    s.textContent = text;
    s.className = bad ? 'status bad' : 'status';
  }
  function usd(v) { return v === null || v === undefined ? '–' : '$' + String(v); }

  function showCredit(c) {
    var dl = $('credit');
    dl.textContent = '';
    $('credit-none').hidden = !!c;
    if (!c) return;
    [['Funded', c.funded_usd], ['Spent', c.spent_usd], ['Left', c.left_usd], ['At most a chat', c.usd_per_chat]].forEach(function (r) {
      dl.appendChild(el('dt', null, r[0]));
      dl.appendChild(el('dd', null, usd(r[1])));
    });
  }

  function showWallets(ws) {
    var ul = $('wallets');
    ul.textContent = '';
    (ws || []).forEach(function (w) {
      var li = el('li');
      li.appendChild(el('strong', null, w.account_id));
      li.appendChild(el('span', 'meta', w.network + ', proved ' + api.when(w.proved_at)));
      ul.appendChild(li);
    });
  }

  function loadMe() {
    return api.get('/api/v1/me').then(function (b) {
      me = b;
      showCredit(b.credit);
      showWallets(b.wallets);
    });
  }

  function loadUsage() {
    return api.get('/api/v1/me/usage').then(function (b) {
      var body = $('usage').querySelector('tbody');
      body.textContent = '';
      var usage = b.usage || [];
      $('usage-none').hidden = usage.length > 0;
      usage.forEach(function (u) {
        var tr = el('tr');
        var reconciled = u.billed_usd !== null && u.billed_usd !== undefined;
        if (reconciled) tr.className = 'is-reconciled';
        var at = el('td');
        at.appendChild(api.time(u.at));
        tr.appendChild(at);
        tr.appendChild(el('td', null, u.model));
        var t = u.tokens || {};
        tr.appendChild(el('td', 'num', (t.in || 0) + ' / ' + (t.cached || 0) + ' / ' + (t.out || 0)));
        tr.appendChild(el('td', 'num', usd(u.charged_usd)));
        tr.appendChild(el('td', 'num', reconciled ? usd(u.billed_usd) : 'not billed yet'));
        var r = el('td');
        if (reconciled) {
          r.appendChild(el('span', 'reconciled', '✓ reconciled'));
          // The bill's difference in words: a sign after the $ reads as a typo.
          var diff = String(u.reconciled_usd || '0');
          if (Number(diff) < 0) r.appendChild(el('span', 'meta', ' ' + usd(diff.replace('-', '')) + ' given back with the bill'));
          else if (Number(diff) > 0) r.appendChild(el('span', 'meta', ' ' + usd(diff) + ' more with the bill'));
        } else {
          r.appendChild(el('span', 'meta', 'waiting for the bill'));
        }
        tr.appendChild(r);
        body.appendChild(tr);
      });
      var tt = b.totals || {};
      $('usage-totals').textContent = (tt.calls || 0) + ' calls, ' + usd(tt.charged_usd) + ' charged; ' + (tt.reconciled || 0) +
        ' reconciled with NEAR AI\'s bill of ' + usd(tt.billed_usd) + '.';
    });
  }

  function loadTip() {
    return api.get('/api/v1/me/tip').then(function (b) {
      var i = $('tip');
      i.min = b.min_percent; i.max = b.max_percent; i.step = b.step_percent; i.value = b.tip_percent;
      $('tip').previousElementSibling.textContent = 'A tip, as a percent of each call\'s bill (' + b.min_percent + ' to ' + b.max_percent +
        ' in steps of ' + b.step_percent + '; a donation, charged apart from the fee)';
    });
  }
  $('tip-form').addEventListener('submit', function (e) {
    e.preventDefault();
    api.put('/api/v1/me/tip', { tip_percent: Number($('tip').value) }).then(function (b) {
      say('tip-status', 'Your tip is ' + b.tip_percent + '%.');
    }).catch(function (err) { say('tip-status', err.message, true); });
  });

  function loadPay() {
    return api.get('/api/v1/pay').then(function (b) {
      var p = $('pay-where');
      p.textContent = 'Send NEAR on ' + b.network + ' from your wallet to ' + b.receiver +
        (b.near_usd ? ' (1 NEAR is $' + b.near_usd + ' now)' : '') + ', then paste the transaction\'s hash here.';
    });
  }
  $('pay-form').addEventListener('submit', function (e) {
    e.preventDefault();
    var network = (me && me.network) || 'mainnet';
    var account = (me && me.account) || '';
    api.post('/api/v1/pay', { network: network, account_id: account, tx_hash: $('tx-hash').value.trim() }).then(function (b) {
      say('pay-status', 'Counted: ' + b.added_near + ' NEAR, $' + b.added_usd + ' of credit.');
      showCredit(b.credit);
    }).catch(function (err) { say('pay-status', err.message, true); });
  });

  function loadTokens() {
    return api.get('/api/v1/pay/tokens').then(function (b) {
      var sel = $('intent-token');
      sel.textContent = '';
      (b.tokens || []).forEach(function (t) {
        var o = el('option', null, t.symbol + ' on ' + t.chain + (t.usd ? ' ($' + t.usd + ')' : ''));
        o.value = t.asset;
        sel.appendChild(o);
      });
    });
  }
  var polling = null;
  var FINAL = { SUCCESS: true, REFUNDED: true, FAILED: true };
  function follow(address) {
    clearTimeout(polling);
    api.get('/api/v1/pay/intents/' + encodeURIComponent(address)).then(function (b) {
      var t = b.top_up || {};
      $('intent-state').textContent = t.status + (t.status === 'SUCCESS' ? ': $' + t.credited_usd + ' added' : '');
      if (b.credit) showCredit(b.credit);
      $('intent-deadline').hidden = !!FINAL[t.status];
      if (!FINAL[t.status]) polling = setTimeout(function () { follow(address); }, 3000);
    }).catch(function (err) {
      say('intent-status', err.message, true);
      polling = setTimeout(function () { follow(address); }, 10000);
    });
  }
  $('intent-form').addEventListener('submit', function (e) {
    e.preventDefault();
    api.post('/api/v1/pay/intents', {
      usd: $('intent-usd').value.trim(), origin_asset: $('intent-token').value, refund_to: $('intent-refund').value.trim()
    }).then(function (b) {
      var t = b.top_up;
      $('intent').hidden = false;
      $('intent-amount').textContent = t.amount_in_formatted + ' (about $' + t.amount_in_usd + ')';
      $('intent-address').value = t.deposit_address;
      $('intent-memo').hidden = !t.deposit_memo;
      $('intent-memo').textContent = t.deposit_memo ? 'With the memo ' + t.deposit_memo : '';
      $('intent-state').textContent = t.status;
      $('intent-deadline').textContent = 'before ' + api.when(t.deadline);
      say('intent-status', '');
      follow(t.deposit_address);
    }).catch(function (err) { say('intent-status', err.message, true); });
  });

  function drawView() {
    var holder = $('view-flower');
    var spec = null;
    try { spec = JSON.parse(document.getElementById('me').dataset.sample || 'null'); } catch (e) { spec = null; }
    if (!spec) return;
    fetch('/api/v1/render?format=svg', {
      method: 'POST', headers: { 'Content-Type': 'application/json', 'Accept': 'image/svg+xml' },
      body: JSON.stringify({ spec: spec })
    }).then(function (res) {
      if (!res.ok) throw new Error('the picture could not be drawn (' + res.status + ')');
      return res.text();
    }).then(function (text) {
      var svg = new DOMParser().parseFromString(text, 'image/svg+xml').documentElement;
      if (!svg || svg.nodeName !== 'svg') throw new Error('the picture could not be read');
      holder.textContent = '';
      holder.appendChild(document.importNode(svg, true));
    }).catch(function (err) { holder.textContent = ''; holder.appendChild(el('p', 'problem', String(err.message || err))); });
  }
  function loadView() {
    return api.get('/api/v1/me/view').then(function (b) {
      var v = b.view || {};
      $('view-palette').value = v.palette;
      $('view-labels').value = v.labels;
      $('view-max').value = v.max_labels || 0;
      drawView();
    });
  }
  $('view-form').addEventListener('submit', function (e) {
    e.preventDefault();
    var view = { schema: 'view/v1', palette: $('view-palette').value, labels: $('view-labels').value, max_labels: Number($('view-max').value) };
    api.put('/api/v1/me/view', { view: view }).then(function () {
      say('view-status', 'Kept: every flower you see is drawn this way.');
      drawView();
    }).catch(function (err) { say('view-status', err.message, true); });
  });

  var profile = {};
  function loadProfile() {
    return api.get('/api/v1/me/profile').then(function (b) {
      profile = b.profile || {};
      $('profile-name').value = profile.name || '';
      $('profile-about').value = profile.about || '';
    });
  }
  $('profile-form').addEventListener('submit', function (e) {
    e.preventDefault();
    var next = {};
    Object.keys(profile).forEach(function (k) { next[k] = profile[k]; });
    next.name = $('profile-name').value.trim() || null;
    next.about = $('profile-about').value.trim() || null;
    api.put('/api/v1/me/profile', { profile: next }).then(function (b) {
      profile = b.profile || {};
      say('profile-status', 'Kept.');
    }).catch(function (err) { say('profile-status', err.message, true); });
  });

  [loadMe, loadUsage, loadTip, loadPay, loadTokens, loadView, loadProfile].forEach(function (f) {
    f().catch(function (err) { say('me-status', err.message, true); });
  });
})();
