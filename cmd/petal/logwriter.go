package main

import (
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// A cheap request is a few tens of microseconds, and writing its access line
// to stdout was a write system call of its own, as dear as answering it. The
// coalescing writer gathers the lines written within logFlushEvery and writes
// them in one call, in order. Nothing is dropped: past logBufferCap the
// writer writes at once, in the caller's time. The trade: a line reaches the
// output up to logFlushEvery late, and a crash (not a clean stop, which
// flushes) loses at most that much.
const (
	logFlushEvery = 2 * time.Millisecond
	logBufferCap  = 256 << 10
)

type coalescingWriter struct {
	mu      sync.Mutex
	w       io.Writer
	buf     []byte
	spare   []byte
	closed  bool
	wake    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	flushes atomic.Int64 // write calls made, for the test
}

func newCoalescingWriter(w io.Writer) *coalescingWriter {
	c := &coalescingWriter{w: w, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go c.loop()
	return c
}

// Write keeps p to be written with the lines around it; it never fails (a
// log line that can't be written has nowhere better to go).
func (c *coalescingWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return c.w.Write(p)
	}
	c.buf = append(c.buf, p...)
	switch {
	case len(c.buf) >= logBufferCap:
		c.flushLocked()
	case len(c.buf) == len(p):
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
	return len(p), nil
}

func (c *coalescingWriter) flushLocked() {
	if len(c.buf) == 0 {
		return
	}
	_, _ = c.w.Write(c.buf)
	c.flushes.Add(1)
	c.buf, c.spare = c.spare[:0], c.buf
}

func (c *coalescingWriter) loop() {
	defer close(c.done)
	for {
		select {
		case <-c.wake:
		case <-c.stop:
			return
		}
		select {
		case <-time.After(logFlushEvery):
		case <-c.stop:
			return
		}
		c.mu.Lock()
		c.flushLocked()
		c.mu.Unlock()
	}
}

// Close writes what is kept; later writes go straight through.
func (c *coalescingWriter) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	close(c.stop)
	c.mu.Unlock()
	<-c.done
	c.mu.Lock()
	defer c.mu.Unlock()
	c.flushLocked()
	c.closed = true
	return nil
}
