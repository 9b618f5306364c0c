// /make: the session's (or person's) conversations, newest activity first,
// a page at a time (GET /api/v1/conversations), each opening at its run, or
// an exploration at its own record.
'use strict';
(function () {
  var api = window.petalAPI, el = api.el;
  var section = document.getElementById('conversations');
  var list = document.getElementById('conversation-list');
  var more = document.getElementById('conversations-more');
  var statusEl = document.getElementById('conversations-status');
  var current = document.getElementById('make').dataset.run || '';
  var PAGE = 10;
  var cursor = null;

  function address(c) {
    if (c.kind === 'run') return '/make?run=' + encodeURIComponent(c.id);
    return '/api/v1/explorations/' + encodeURIComponent(c.id);
  }
  function load() {
    var path = '/api/v1/conversations?limit=' + PAGE + (cursor ? '&cursor=' + encodeURIComponent(cursor) : '');
    return api.get(path).then(function (b) {
      (b.conversations || []).forEach(function (c) {
        var li = el('li');
        var a = el('a', null, c.title || (c.kind === 'run' ? 'A chat without a title yet' : 'An exploration without a title yet'));
        a.href = address(c);
        if (c.id === current) a.setAttribute('aria-current', 'page');
        li.appendChild(a);
        li.appendChild(el('span', 'meta', (c.kind === 'run' ? 'chat' : 'exploration') + ', ' + c.status + ', ' + api.when(c.updated_at)));
        list.appendChild(li);
      });
      cursor = b.next_cursor || null;
      more.hidden = !cursor;
      section.hidden = list.children.length === 0;
    });
  }
  more.addEventListener('click', function () {
    more.disabled = true;
    load().catch(function (err) { statusEl.textContent = err.message; }).then(function () { more.disabled = false; });
  });
  load().catch(function (err) { section.hidden = false; statusEl.textContent = err.message; });
})();
