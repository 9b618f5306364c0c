// The flower on a page: each petal can be hovered or focused to read who it
// is (its account, weight, share and colour, under the picture) and clicked
// (or Enter) to open what Petal knows of that account: the other groups on
// the map it is in. The picture itself is drawn by the server
// (domain/specs/render.go); this only reads its data- attributes.
'use strict';
window.petalFlower = function (svg) {
  if (!svg || svg.dataset.petals === 'on') return;
  svg.dataset.petals = 'on';
  var fig = svg.closest('figure') || svg.parentNode;
  var info = document.createElement('p');
  info.className = 'petal-info';
  info.setAttribute('aria-live', 'polite');
  var after = svg.parentNode === fig ? svg : svg.parentNode;
  fig.insertBefore(info, after.nextSibling);
  // The picture holds things a person can reach one by one: a group, not
  // one image.
  svg.setAttribute('role', 'group');
  function describe(p) {
    var d = p.dataset;
    var s = (d.number ? d.number + '. ' : '') + d.name + ': ' + d.share + ' of the total, weight ' + d.weight;
    if (d.colour) s += ' (' + d.colour + ')';
    if (d.account && d.account.indexOf(':') > 0) s += '. Open to see its other groups.';
    return s;
  }
  function open(p) {
    if (p.dataset.account) window.location.href = '/account?id=' + encodeURIComponent(p.dataset.account);
  }
  Array.prototype.forEach.call(svg.querySelectorAll('path.petal'), function (p) {
    p.setAttribute('tabindex', '0');
    p.setAttribute('role', p.dataset.account ? 'link' : 'img');
    p.setAttribute('aria-label', describe(p));
    var show = function () { info.textContent = describe(p); };
    p.addEventListener('mouseenter', show);
    p.addEventListener('focus', show);
    p.addEventListener('click', function () { open(p); });
    p.addEventListener('keydown', function (e) {
      if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); open(p); }
    });
  });
};
document.addEventListener('DOMContentLoaded', function () {
  Array.prototype.forEach.call(document.querySelectorAll('.flower > svg'), window.petalFlower);
});
