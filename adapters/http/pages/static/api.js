// The pages' one way to call the API: JSON in and out, and an error's
// message and hint as the Error's text. Every write goes to the API's own
// routes from this site's page, so the API's Origin rules hold.
'use strict';
window.petalAPI = (function () {
  function call(method, path, body) {
    var init = { method: method, headers: { 'Accept': 'application/json' } };
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    return fetch(path, init).then(function (res) {
      return res.json().catch(function () { return {}; }).then(function (b) {
        if (!res.ok) {
          var e = (b && b.error) || {};
          var err = new Error((e.message || ('the server answered ' + res.status)) + (e.hint ? ' — ' + e.hint : ''));
          err.status = res.status;
          err.code = e.code;
          throw err;
        }
        return b;
      });
    });
  }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function when(iso) {
    if (!iso) return '–';
    var d = new Date(iso);
    return isNaN(d) ? String(iso) : d.toLocaleString();
  }
  // An instant as a <time>: the day and the minute in UTC as a person reads
  // them, the exact time on hover.
  var MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  function time(iso) {
    var d = new Date(iso);
    if (!iso || isNaN(d.getTime())) return document.createTextNode(iso ? String(iso) : '–');
    var hm = String(d.getUTCHours()).padStart(2, '0') + ':' + String(d.getUTCMinutes()).padStart(2, '0');
    var t = el('time', '', d.getUTCDate() + ' ' + MONTHS[d.getUTCMonth()] + ' ' + d.getUTCFullYear() + ', ' + hm + ' UTC');
    t.setAttribute('datetime', iso);
    t.title = d.toUTCString().replace('GMT', 'UTC');
    return t;
  }
  return {
    get: function (p) { return call('GET', p); },
    post: function (p, b) { return call('POST', p, b); },
    put: function (p, b) { return call('PUT', p, b); },
    el: el,
    when: when,
    time: time
  };
})();

// Sign out, from the header of every page once signed in.
document.addEventListener('DOMContentLoaded', function () {
  var out = document.getElementById('sign-out');
  if (!out) return;
  out.addEventListener('click', function () {
    out.disabled = true;
    window.petalAPI.post('/api/v1/auth/logout').then(function () {
      location.assign('/signin');
    }).catch(function (err) {
      out.disabled = false;
      var s = document.getElementById('who');
      if (s) s.textContent = err.message;
    });
  });
});
