// The original stack for deploy/bench/door.sh: GET /api/v1/networks in Hono 4
// on Node, doing per request what `petal serve` does for it (adapters/http:
// everyRequest, the route's openCORS, the tool door, the counted limiter):
//
//   - a request id: the client's X-Request-Id if sane, else this process's
//     random prefix and a counter (hono/request-id; petal's generator);
//   - open CORS headers, petal's values (c.header(); CORS=hono: hono/cors);
//   - an in-memory fixed-window limit per address on tool calls, counted
//     (checks by outcome, and the check's time) as petal's CountedRateLimiter;
//   - any query parameter refused as unknown (list_networks takes none);
//   - the answer: the tool's JSON, encoded once at start, with tools_version
//     put in front per request;
//   - the request counted in a histogram by route, method and status, and an
//     in-flight gauge (prom-client, as client_golang in petal);
//   - one JSON access line to stdout, the lines written together every 2 ms
//     as petal's coalescing writer does (LOG_LINES=each: a write per line);
//   - a thrown error answered 500 in the contract's shape.
//
// Usage: node app.mjs PORT BODY_FILE CONTENT_TYPE, where BODY_FILE is petal's
// own answer (tools_version first). GET /metrics shows the counts.
import { randomBytes } from 'node:crypto'
import { readFileSync, writeSync } from 'node:fs'
import { getConnInfo } from '@hono/node-server/conninfo'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import { cors } from 'hono/cors'
import { requestId } from 'hono/request-id'
import { routePath } from 'hono/route'
import client from 'prom-client'

const [port, bodyFile, contentType] = process.argv.slice(2)
const toolsVersionPrefix = Buffer.from('{"tools_version":"1.0.0"')
const petalAnswer = readFileSync(bodyFile)
if (!petalAnswer.subarray(0, toolsVersionPrefix.length).equals(toolsVersionPrefix)) {
  throw new Error(`${bodyFile} does not start with ${toolsVersionPrefix}`)
}
// What list_networks keeps: its answer without tools_version, from the '{' on.
const networksAnswer = Buffer.concat([Buffer.from('{'), petalAnswer.subarray(toolsVersionPrefix.length + 1)])
const toolCallsPerMin = Number(process.env.PETAL_TOOL_CALLS_PER_MIN ?? 60)

// Metrics: the names and labels petal's door and limiter use.
const requestDuration = new client.Histogram({
  name: 'petal_http_request_duration_seconds',
  help: 'HTTP requests by route pattern, method and status, with the time to answer them.',
  labelNames: ['route', 'method', 'code'],
})
const inFlight = new client.Gauge({ name: 'petal_http_requests_in_flight', help: 'HTTP requests being answered now.' })
const limitChecks = new client.Counter({
  name: 'petal_rate_limit_checks_total',
  help: 'Rate-limit checks, by limit and outcome.',
  labelNames: ['limit', 'outcome'],
})
const limitCheckSeconds = new client.Histogram({
  name: 'petal_rate_limit_check_seconds',
  help: 'How long one rate-limit check took.',
  buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 1],
  labelNames: ['limit'],
})

// Access lines, gathered and written in one call every 2 ms.
const writeEachLine = process.env.LOG_LINES === 'each'
let pendingLines = ''
function logLine(line) {
  if (writeEachLine) return writeSync(1, line)
  if (pendingLines === '') setTimeout(flushLines, 2)
  pendingLines += line
}
function flushLines() {
  const lines = pendingLines
  pendingLines = ''
  if (lines !== '') writeSync(1, lines)
}

// Request ids: 24 hex digits, a random half per process and a counter.
const idPrefix = randomBytes(6).toString('hex')
let idCount = 0
const newRequestId = () => idPrefix + (++idCount).toString(16).padStart(12, '0')

// The limiter: a fixed window per key, finished windows forgotten once a minute.
const windows = new Map()
let lastSweep = 0
function allow(key, limit, perMs) {
  const now = Date.now()
  if (now - lastSweep > 60_000) {
    for (const [k, w] of windows) if (now - w.start >= w.perMs) windows.delete(k)
    lastSweep = now
  }
  let w = windows.get(key)
  if (!w || now - w.start >= perMs) {
    w = { start: now, perMs, count: 0 }
    windows.set(key, w)
  }
  if (w.count >= limit) return { ok: false, waitMs: w.start + perMs - now }
  w.count++
  return { ok: true, waitMs: 0 }
}
function countedAllow(key, limit, perMs) {
  const limitName = key.slice(0, key.indexOf(':'))
  const start = performance.now()
  const got = allow(key, limit, perMs)
  limitCheckSeconds.observe({ limit: limitName }, (performance.now() - start) / 1000)
  limitChecks.inc({ limit: limitName, outcome: got.ok ? 'allowed' : 'refused' })
  return got
}

const errorBody = (c, status, code, message, hint) => c.json({ error: { code, message, hint } }, status)

const app = new Hono()
app.use(requestId({ generator: newRequestId }))
app.use(async (c, next) => {
  const start = performance.now()
  inFlight.inc()
  try {
    await next()
  } finally {
    inFlight.dec()
  }
  const seconds = (performance.now() - start) / 1000
  const route = routePath(c, -1) || 'unmatched'
  requestDuration.observe({ route, method: c.req.method, code: String(c.res.status) }, seconds)
  logLine(
    JSON.stringify({
      time: new Date().toISOString(),
      level: 'INFO',
      msg: 'request',
      method: c.req.method,
      path: c.req.path,
      route,
      status: c.res.status,
      bytes: Number(c.res.headers.get('content-length') ?? 0),
      us: Math.round(seconds * 1e6),
      request_id: c.get('requestId'),
    }) + '\n',
  )
})
app.onError((err, c) => {
  console.error(JSON.stringify({ time: new Date().toISOString(), level: 'ERROR', msg: 'panic', panic: String(err), request_id: c.get('requestId') }))
  return errorBody(c, 500, 'internal', 'something went wrong on our side', 'try again; if it keeps happening, tell us the X-Request-Id')
})
app.notFound((c) => errorBody(c, 404, 'not_found', `no route ${c.req.method} ${c.req.path}`, 'see /api/v1/openapi.json'))

// Open CORS with petal's values. hono/cors sets its headers on c.res before
// the handler runs, and Hono then merges the handler's answer into that
// Response through real web Response objects and streams, which costs more
// than everything else here (@hono/node-server's fast path is lost): about
// 140 µs of CPU a request against 30. So by default the same headers go
// through c.header(), which keeps the fast path; CORS=hono uses hono/cors.
const corsValues = {
  origin: '*',
  exposeHeaders: ['X-Request-Id, Retry-After, ETag'],
  allowMethods: ['GET, POST, PUT, OPTIONS'],
  allowHeaders: ['Content-Type, Accept, Last-Event-ID, X-Request-Id, Idempotency-Key, Mcp-Session-Id, Mcp-Protocol-Version'],
  maxAge: 600,
}
function openCORS(c, next) {
  c.header('Access-Control-Allow-Origin', corsValues.origin)
  c.header('Access-Control-Expose-Headers', corsValues.exposeHeaders[0])
  if (c.req.method === 'OPTIONS') {
    c.header('Access-Control-Allow-Methods', corsValues.allowMethods[0])
    c.header('Access-Control-Allow-Headers', corsValues.allowHeaders[0])
    c.header('Access-Control-Max-Age', String(corsValues.maxAge))
    return c.body(null, 204)
  }
  return next()
}
app.use('/api/v1/*', process.env.CORS === 'hono' ? cors(corsValues) : openCORS)

// A tool call: its address's limit, then its input, then its answer.
app.get('/api/v1/networks', (c) => {
  let address = getConnInfo(c).remote.address ?? ''
  if (address.startsWith('::ffff:')) address = address.slice(7)
  const { ok, waitMs } = countedAllow('tools:' + address, toolCallsPerMin, 60_000)
  if (!ok) {
    const secs = Math.max(1, Math.ceil(waitMs / 1000))
    c.header('Retry-After', String(secs))
    return c.json({ error: { code: 'rate_limited', message: `more than ${toolCallsPerMin} tool calls a minute from this address`, hint: `try again in ${secs} s`, retry_after_s: secs } }, 429)
  }
  if (c.req.url.includes('?')) {
    for (const name of new URL(c.req.url).searchParams.keys()) {
      return errorBody(c, 400, 'bad_input', `unknown query parameter ${name}`, "see the tool's input schema at /api/v1/openapi.json")
    }
  }
  const answer = Buffer.concat([toolsVersionPrefix, Buffer.from(','), networksAnswer.subarray(1)])
  // Its length said, as petal does, so the access line can give it.
  return c.body(answer, 200, { 'Content-Type': contentType, 'Content-Length': String(answer.length) })
})
app.get('/metrics', async (c) => c.text(await client.register.metrics()))

const server = serve({ fetch: app.fetch, port: Number(port), hostname: '127.0.0.1' })
// petal's http.Server: ReadHeaderTimeout 10 s, IdleTimeout 120 s.
server.headersTimeout = 10_000
server.keepAliveTimeout = 120_000
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    flushLines()
    process.exit(0)
  })
}
