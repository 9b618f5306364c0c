// A small client of petal typed by openapi-typescript's petal.d.ts (written
// by TestOpenAPITypeScriptClient from the served document): it reads five
// answers, each field through its generated type. tsc --strict checks it.
import type { paths } from "./petal";

// The JSON body of an operation's 200 answer.
type Ok<Op> = Op extends { responses: { 200: { content: { "application/json": infer T } } } } ? T : never;

type Info = Ok<paths["/api/v1/info"]["get"]>;
type Health = Ok<paths["/api/v1/health"]["get"]>;
type Networks = Ok<paths["/api/v1/networks"]["get"]>;
type Price = Ok<paths["/api/v1/price"]["get"]>;
type LookUp = Ok<paths["/api/v1/look-up"]["get"]>;

export function describe(info: Info, health: Health, networks: Networks, price: Price, lookUp: LookUp): string[] {
  const lines: string[] = [];
  const build: string = info.build_id;
  const implementation: string = info.server_implementation;
  lines.push(`${implementation} ${build} (tools ${info.tools_version})`);
  const ok: boolean = health.ok;
  const db: string = health.db;
  lines.push(`serving: ${ok}, database: ${db}`);
  for (const n of networks.networks) {
    const id: string = n.id;
    const chains: string[] | undefined = n.chains;
    lines.push(`${id}: ${n.title} on ${n.chain}${chains ? " (" + chains.join(", ") + ")" : ""}`);
  }
  const hash: string = price.hash;
  lines.push(`price ${price.price.version} ${hash}`);
  lines.push(`look_up ${JSON.stringify(lookUp.query)}: next ${JSON.stringify(lookUp.next)}`);
  return lines;
}
