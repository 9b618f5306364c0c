// The connector as one classic script for petal's /signin page: it sets
// window.PetalNearConnect to @hot-labs/near-connect's exports.
window.PetalNearConnect = require("@hot-labs/near-connect");
