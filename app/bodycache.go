package app

import (
	"container/list"
	"sync"
)

// bodyCache keeps recently served snapshot bodies (gzipped) in memory, up to
// a byte budget, least recently used out first. A snapshot's name is its
// content, so a cached body can never be stale.
type bodyCache struct {
	mu    sync.Mutex
	max   int
	size  int
	order *list.List // front: most recently used
	items map[string]*list.Element
}

type cachedBody struct {
	sha string
	gz  []byte
}

// bodyCacheBytes is the memory the body cache may hold.
const bodyCacheBytes = 64 << 20

func newBodyCache(max int) *bodyCache {
	return &bodyCache{max: max, order: list.New(), items: map[string]*list.Element{}}
}

func (c *bodyCache) get(sha string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[sha]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*cachedBody).gz, true
}

func (c *bodyCache) put(sha string, gz []byte) {
	if len(gz) > c.max/4 {
		return // one huge body must not empty the cache
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[sha]; ok {
		return
	}
	c.items[sha] = c.order.PushFront(&cachedBody{sha: sha, gz: gz})
	c.size += len(gz)
	for c.size > c.max {
		last := c.order.Back()
		cb := last.Value.(*cachedBody)
		c.order.Remove(last)
		delete(c.items, cb.sha)
		c.size -= len(cb.gz)
	}
}
