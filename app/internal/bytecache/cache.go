package bytecache

import (
	"container/list"
	"sync"
)

// byteCache keeps values up to a budget of bytes, the least recently used
// going first. It is for content named by its hash (snapshot bodies, decoded
// snapshots), which can never be stale under its name, so nothing expires.
// A value larger than maxItem is never kept: one huge value must not empty
// the cache of everything else.
type ByteCache[K comparable, V any] struct {
	mu      sync.Mutex
	max     int
	maxItem int
	sizeOf  func(V) int
	held    int
	order   *list.List // front: the most recently used
	items   map[K]*list.Element
}

type cacheEntry[K comparable, V any] struct {
	key  K
	val  V
	size int
}

func NewByteCache[K comparable, V any](max, maxItem int, sizeOf func(V) int) *ByteCache[K, V] {
	return &ByteCache[K, V]{max: max, maxItem: min(maxItem, max), sizeOf: sizeOf, order: list.New(), items: map[K]*list.Element{}}
}

func (c *ByteCache[K, V]) Get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[k]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*cacheEntry[K, V]).val, true
}

func (c *ByteCache[K, V]) Put(k K, v V) {
	size := c.sizeOf(v)
	if size > c.maxItem {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[k]; ok {
		return
	}
	c.items[k] = c.order.PushFront(&cacheEntry[K, V]{key: k, val: v, size: size})
	c.held += size
	for c.held > c.max {
		last := c.order.Back()
		e := last.Value.(*cacheEntry[K, V])
		c.order.Remove(last)
		delete(c.items, e.key)
		c.held -= e.size
	}
}

func (c *ByteCache[K, V]) Remove(k K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		c.order.Remove(e)
		delete(c.items, k)
		c.held -= e.Value.(*cacheEntry[K, V]).size
	}
}

// bytesHeld is what the cache holds now, by its values' sizes.
func (c *ByteCache[K, V]) BytesHeld() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.held
}
