package main

import (
	"errors"
	"io"
	"net"
	"sync"
	"testing"
)

// tcpProxy forwards a loopback port to a target, and can be cut (listener
// and every connection closed) and restored on the same port: a database that
// stops answering and comes back, without touching the shared server.
type tcpProxy struct {
	t      *testing.T
	target string
	addr   string
	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
}

func newTCPProxy(t *testing.T, target string) *tcpProxy {
	t.Helper()
	p := &tcpProxy{t: t, target: target, conns: map[net.Conn]struct{}{}}
	p.listen("127.0.0.1:0")
	p.addr = p.ln.Addr().String()
	t.Cleanup(p.cut)
	return p
}

func (p *tcpProxy) listen(addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		p.t.Fatalf("proxy listen %s: %v", addr, err)
	}
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.wg.Add(1)
			go func() { defer p.wg.Done(); p.pipe(c) }()
		}
	}()
}

func (p *tcpProxy) pipe(client net.Conn) {
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = client.Close()
		return
	}
	p.mu.Lock()
	if p.ln == nil { // cut meanwhile
		p.mu.Unlock()
		_ = client.Close()
		_ = server.Close()
		return
	}
	p.conns[client], p.conns[server] = struct{}{}, struct{}{}
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	copyHalf := func(dst, src net.Conn) {
		_, err := io.Copy(dst, src)
		_ = err
		if errors.Is(err, net.ErrClosed) || err == nil {
			_ = dst.Close()
		}
		done <- struct{}{}
	}
	go copyHalf(server, client)
	go copyHalf(client, server)
	<-done
	_ = client.Close()
	_ = server.Close()
	<-done
	p.mu.Lock()
	delete(p.conns, client)
	delete(p.conns, server)
	p.mu.Unlock()
}

// cut stops answering: no new connections, every open one closed.
func (p *tcpProxy) cut() {
	p.mu.Lock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// restore answers again on the same port.
func (p *tcpProxy) restore() { p.listen(p.addr) }
