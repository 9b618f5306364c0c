package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Listener hears one NOTIFY channel on a connection of its own and hands
// each payload to a function, in order. After every (re)connect it calls
// connected first, since notifications sent while nobody listened are lost:
// whoever follows the channel should then look at the store again.
type Listener struct {
	db      *DB
	log     *slog.Logger
	channel string

	mu        sync.Mutex
	handle    func(payload string)
	connected func()
	ready     chan struct{}
	readyOnce sync.Once
}

var channelName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// NewListener makes a listener of channel (a plain lower-case identifier);
// Run must be running for it to hear anything.
func NewListener(db *DB, log *slog.Logger, channel string) *Listener {
	if !channelName.MatchString(channel) {
		panic("postgres: listener channel " + channel + " is not a plain identifier")
	}
	return &Listener{db: db, log: log, channel: channel, ready: make(chan struct{}),
		handle: func(string) {}, connected: func() {}}
}

// On sets what is done with each payload, and after each (re)connect.
func (l *Listener) On(handle func(payload string), connected func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.handle, l.connected = handle, connected
}

// Ready is closed once the listener first listens.
func (l *Listener) Ready() <-chan struct{} { return l.ready }

// Run listens until ctx ends, reconnecting after a failure: at once-ish
// after a connection that listened, then waiting longer after each failure
// in a row, up to 5 s.
func (l *Listener) Run(ctx context.Context) error {
	const firstBackoff = 100 * time.Millisecond
	backoff := firstBackoff
	for ctx.Err() == nil {
		listened, err := l.listen(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if listened {
			backoff = firstBackoff
		}
		l.log.Warn("listener: listening failed; reconnecting", "channel", l.channel, "err", err, "in", backoff.String())
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
	return nil
}

// listen holds one connection until it fails; listened says whether it got
// as far as listening.
func (l *Listener) listen(ctx context.Context) (listened bool, err error) {
	// LISTEN holds a session: through a transaction pooler it would listen on
	// a server connection handed to others and hear nothing.
	conn, err := pgx.ConnectConfig(ctx, l.db.DirectConfig())
	if err != nil {
		return false, fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+l.channel); err != nil {
		return false, fmt.Errorf("listen: %w", err)
	}
	l.mu.Lock()
	handle, connected := l.handle, l.connected
	l.mu.Unlock()
	connected()
	l.readyOnce.Do(func() { close(l.ready) })
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true, err
		}
		handle(n.Payload)
	}
}
