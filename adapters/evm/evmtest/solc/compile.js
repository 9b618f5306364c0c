// compile.js: compiles contracts/*.sol with solc-js against the installed
// OpenZeppelin Contracts, and writes {Name: {abi, bin}} as JSON to stdout.
// Run by evmtest (Go) at test time; errors go to stderr with a non-zero exit.
const fs = require("fs");
const path = require("path");
const solc = require("solc");

const dir = path.join(__dirname, "contracts");
const sources = {};
for (const f of fs.readdirSync(dir).filter((f) => f.endsWith(".sol")).sort()) {
  sources[f] = { content: fs.readFileSync(path.join(dir, f), "utf8") };
}
const input = {
  language: "Solidity",
  sources,
  settings: {
    // Cancun: what every chain petal reads runs, and the simulated chain too.
    evmVersion: "cancun",
    optimizer: { enabled: true, runs: 200 },
    outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } },
  },
};
function findImports(p) {
  for (const base of [path.join(__dirname, "node_modules")]) {
    const full = path.join(base, p);
    if (fs.existsSync(full)) return { contents: fs.readFileSync(full, "utf8") };
  }
  return { error: "not found: " + p };
}
const out = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports }));
const errors = (out.errors || []).filter((e) => e.severity === "error");
if (errors.length) {
  process.stderr.write(errors.map((e) => e.formattedMessage).join("\n"));
  process.exit(1);
}
const result = { solc: solc.version() };
for (const f of Object.keys(sources)) {
  for (const [name, c] of Object.entries(out.contracts[f])) {
    result[name] = { abi: c.abi, bin: c.evm.bytecode.object };
  }
}
process.stdout.write(JSON.stringify(result));
