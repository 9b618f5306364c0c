// /signin: sign in (or attach another wallet) through NEAR's wallet
// connector, @hot-labs/near-connect (near-connect.js). Petal asks for a
// challenge, the chosen wallet signs it as NEP-413 in its sandboxed frame (or
// by sending the person to its site and back here, the callbackUrl), and the
// proof goes to the API: /api/v1/auth/verify, or /api/v1/me/wallets to attach.
'use strict';
(function () {
  var api = window.petalAPI;
  var root = document.getElementById('signin');
  var statusEl = document.getElementById('wallet-status');
  var form = document.getElementById('wallet-form');
  var mode = root.dataset.mode;
  var callback = location.origin + '/signin';
  var PENDING = 'petal.signin.pending';

  function say(text, bad) {
    statusEl.textContent = text;
    statusEl.className = bad ? 'status bad' : 'status';
  }
  function bytes(b64) { return Uint8Array.from(atob(b64), function (c) { return c.charCodeAt(0); }); }

  // send posts a wallet's signature of the pending challenge to the API.
  function send(pending, signed) {
    var proof = {
      type: 'nep413', account_id: signed.accountId, public_key: signed.publicKey, signature: signed.signature,
      message: pending.message, nonce: pending.nonce, recipient: pending.recipient
    };
    if (pending.callback) proof.callback_url = pending.callback;
    var path = pending.mode === 'attach' ? '/api/v1/me/wallets' : '/api/v1/auth/verify';
    return api.post(path, { network: pending.network, proof: proof }).then(function () {
      sessionStorage.removeItem(PENDING);
      say(pending.mode === 'attach' ? 'Attached.' : 'Signed in.');
      location.assign('/me');
    });
  }

  // A wallet that signs by redirect comes back here with the signature in
  // the fragment (NEP-413: #accountId=…&publicKey=…&signature=…).
  var back = new URLSearchParams(location.hash.slice(1));
  if (back.get('signature') && back.get('accountId')) {
    history.replaceState(null, '', location.pathname + location.search);
    var pending = null;
    try { pending = JSON.parse(sessionStorage.getItem(PENDING) || 'null'); } catch (e) { pending = null; }
    if (!pending) {
      say('Your wallet came back, but this tab asked for no signature: choose your wallet again.', true);
    } else {
      say('Checking your wallet\'s signature…');
      pending.callback = callback;
      send(pending, { accountId: back.get('accountId'), publicKey: back.get('publicKey'), signature: back.get('signature') })
        .catch(function (err) { say(err.message, true); });
    }
  } else if (back.get('error') || back.get('errorCode')) {
    history.replaceState(null, '', location.pathname + location.search);
    say('Your wallet did not sign: ' + (back.get('error') || back.get('errorCode')), true);
  }

  if (!form) return;
  var NC = window.PetalNearConnect;
  var connectors = {};
  function connector(network) {
    if (!connectors[network]) {
      connectors[network] = new NC.NearConnector({
        network: network,
        manifest: root.dataset.manifest || undefined,
        cspNonce: root.dataset.nonce,
        features: { signMessage: true },
        autoConnect: false,
        footerBranding: null
      });
    }
    return connectors[network];
  }

  form.addEventListener('submit', function (e) {
    e.preventDefault();
    var network = document.getElementById('network').value === 'testnet' ? 'testnet' : 'mainnet';
    var c = connector(network);
    var button = document.getElementById('wallet-sign-in');
    button.disabled = true;
    say('Choose your wallet…');
    var pending;
    api.post('/api/v1/auth/challenge').then(function (ch) {
      // A wallet in the connector answers in the page, so its payload has no
      // callbackUrl; one that signs by redirect comes back with this page's
      // (callback), which the API accepts as this site's own.
      pending = { mode: mode, network: network, message: ch.message, nonce: ch.nonce, recipient: ch.recipient, callback: null };
      sessionStorage.setItem(PENDING, JSON.stringify(pending));
      return c.selectWallet({ features: { signMessage: true } });
    }).then(function (id) {
      return c.wallet(id);
    }).then(function (wallet) {
      say('Sign the message in ' + wallet.manifest.name + '…');
      var params = { message: pending.message, recipient: pending.recipient, nonce: bytes(pending.nonce) };
      if (wallet.manifest.features && wallet.manifest.features.signInAndSignMessage) {
        return wallet.signInAndSignMessage({ network: network, messageParams: params }).then(function (accounts) {
          var a = accounts && accounts[0];
          if (!a || !a.signedMessage) throw new Error('the wallet signed in without signing the message');
          return a.signedMessage;
        });
      }
      return wallet.signIn({ network: network }).then(function () { return wallet.signMessage(params); });
    }).then(function (signed) {
      if (!signed || !signed.signature) throw new Error('the wallet gave no signature');
      say('Checking your wallet\'s signature…');
      return send(pending, signed);
    }).catch(function (err) {
      button.disabled = false;
      say(String((err && err.message) || err), true);
    });
  });
})();
