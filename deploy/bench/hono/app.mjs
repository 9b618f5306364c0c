// The original stack's shape for deploy/bench/door.sh: Hono 4 on Node, one
// route answering the given bytes, behind a fixed-window per-address limiter
// kept in memory. Usage: node app.mjs PORT BODY_FILE CONTENT_TYPE
import { readFileSync } from 'node:fs'
import { serve } from '@hono/node-server'
import { Hono } from 'hono'

const [port, bodyFile, contentType] = process.argv.slice(2)
const body = readFileSync(bodyFile)
const limit = 1_000_000_000
const windowMs = 60_000
const windows = new Map()

const app = new Hono()
app.use('/api/*', async (c, next) => {
  const key = c.env.incoming.socket.remoteAddress ?? ''
  const now = Date.now()
  let w = windows.get(key)
  if (!w || now - w.start >= windowMs) {
    w = { start: now, count: 0 }
    windows.set(key, w)
  }
  if (w.count >= limit) {
    return c.json({ error: { code: 'rate_limited', message: 'too many calls', hint: '' } }, 429)
  }
  w.count++
  await next()
})
app.get('/api/v1/networks', (c) => c.body(body, 200, { 'Content-Type': contentType }))
serve({ fetch: app.fetch, port: Number(port), hostname: '127.0.0.1' })
