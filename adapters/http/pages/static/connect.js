// /connect: use an invite, make an agent link, and sign in with a NEAR wallet
// when one is present in the browser. Every write goes to the API's own
// routes, from this site's page (the API checks the Origin).
'use strict';
(function () {
  function post(path, body) {
    return fetch(path, {
      method: 'POST', headers: { 'Content-Type': 'application/json', 'Accept': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body)
    }).then(function (res) {
      return res.json().catch(function () { return {}; }).then(function (b) {
        if (!res.ok) {
          var e = (b && b.error) || {};
          throw new Error((e.message || ('the server answered ' + res.status)) + (e.hint ? ' — ' + e.hint : ''));
        }
        return b;
      });
    });
  }

  var invite = document.getElementById('invite-form');
  var inviteStatus = document.getElementById('invite-status');
  invite.addEventListener('submit', function (e) {
    e.preventDefault();
    var token = document.getElementById('invite').value.trim();
    if (!token) return;
    post('/api/v1/auth/invite', { token: token }).then(function (b) {
      var i = b.invite || {};
      inviteStatus.textContent = 'The invite is ' + (i.status || 'held') + (i.left_usd !== undefined ? ', $' + i.left_usd + ' left' : '') + '. Chat on /make.';
    }).catch(function (err) { inviteStatus.textContent = err.message; });
  });

  var linkForm = document.getElementById('agent-link-form');
  if (linkForm) {
    linkForm.addEventListener('submit', function (e) {
      e.preventDefault();
      var out = document.getElementById('agent-link');
      post('/api/v1/agents/link').then(function (b) {
        out.textContent = 'Your agent link (shown once): ' + b.token;
      }).catch(function (err) { out.textContent = err.message; });
    });
  }

  // A NEAR wallet that injects itself (NEP-413 signMessage) signs in here;
  // without one, the page keeps the steps.
  var wallet = window.near;
  var walletStatus = document.getElementById('wallet-status');
  if (wallet && typeof wallet.signMessage === 'function' && document.getElementById('wallet')) {
    document.getElementById('wallet').hidden = false;
    document.getElementById('wallet-steps').hidden = true;
    document.getElementById('wallet-sign-in').addEventListener('click', function () {
      post('/api/v1/auth/challenge').then(function (ch) {
        var nonce = Uint8Array.from(atob(ch.nonce), function (c) { return c.charCodeAt(0); });
        return Promise.resolve(wallet.signMessage({ message: ch.message, recipient: ch.recipient, nonce: nonce })).then(function (signed) {
          var network = (wallet.networkId || 'mainnet') === 'testnet' ? 'testnet' : 'mainnet';
          return post('/api/v1/auth/verify', {
            network: network,
            proof: {
              type: 'nep413', account_id: signed.accountId, public_key: signed.publicKey, signature: signed.signature,
              message: ch.message, nonce: ch.nonce, recipient: ch.recipient
            }
          });
        });
      }).then(function () {
        walletStatus.textContent = 'Signed in.';
        location.reload();
      }).catch(function (err) { walletStatus.textContent = String(err.message || err); });
    });
  }
})();
