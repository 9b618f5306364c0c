// The counter-check: a field no answer has must not compile, or petal.d.ts
// types its answers as anything at all.
import type { paths } from "./petal";

type Ok<Op> = Op extends { responses: { 200: { content: { "application/json": infer T } } } } ? T : never;

export function wrong(info: Ok<paths["/api/v1/info"]["get"]>): string {
  return info.no_such_field;
}
