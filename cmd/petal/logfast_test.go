package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"testing/slogtest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fastJSON writes what slog.JSONHandler writes, byte for byte, for every
// kind of line: the plain ones it writes itself (strings with every kind of
// byte that needs escaping, integers, booleans, durations) and the rest it
// hands over (floats, times, errors, groups, derived handlers).
func TestFastJSONMatchesSlog(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 30, 23, 59, 1, 123456789, time.UTC)
	records := []struct {
		msg   string
		attrs []slog.Attr
	}{
		{"request", []slog.Attr{slog.String("method", "GET"), slog.String("path", "/api/v1/networks"), slog.Int("status", 200),
			slog.Int64("bytes", 2723), slog.Int64("us", 123), slog.String("request_id", "0123456789abcdef01234567")}},
		{"quotes \" and \\ and \n\r\t\x00\x1f\x7f <&> é 日本 \u2028\u2029 \xff\xfe end", []slog.Attr{
			slog.String("k\"ey\n", "v\"al\\ue\x01\u2029\xc3"), slog.Uint64("u", 1<<63), slog.Bool("b", true), slog.Bool("f", false),
			slog.Duration("d", 1500*time.Millisecond), slog.Int("neg", -42)}},
		{"", nil},
		{"float", []slog.Attr{slog.Float64("ms", 0.218), slog.String("a", "b")}},
		{"time", []slog.Attr{slog.Time("at", at)}},
		{"error", []slog.Attr{slog.Any("err", errors.New("it \"broke\""))}},
		{"group", []slog.Attr{slog.Group("g", slog.Int("a", 1), slog.String("b", "c")), slog.Group("empty")}},
		{"any", []slog.Attr{slog.Any("m", map[string]int{"x": 1})}},
		{"empty key", []slog.Attr{slog.String("", "v")}},
	}
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelWarn, slog.LevelError, slog.LevelInfo + 2} {
		for _, rec := range records {
			for _, when := range []time.Time{at, {}} {
				var fast, std bytes.Buffer
				for _, h := range []struct {
					h   slog.Handler
					out *bytes.Buffer
				}{{newFastJSON(&fast), &fast}, {slog.NewJSONHandler(&std, nil), &std}} {
					r := slog.NewRecord(when, level, rec.msg, 0)
					r.AddAttrs(rec.attrs...)
					require.NoError(t, h.h.Handle(context.Background(), r))
					require.NoError(t, h.h.WithAttrs([]slog.Attr{slog.String("job", "x")}).WithGroup("g").Handle(context.Background(), r.Clone()))
				}
				assert.Equal(t, std.String(), fast.String(), "%s %q", level, rec.msg)
			}
		}
	}
}

func TestFastJSONIsAHandler(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	require.NoError(t, slogtest.TestHandler(newFastJSON(&buf), func() []map[string]any {
		return parseLines(t, buf.String())
	}))
}

func parseLines(t *testing.T, s string) []map[string]any {
	var out []map[string]any
	for line := range strings.Lines(s) {
		rec := map[string]any{}
		require.NoError(t, json.Unmarshal([]byte(line), &rec), line)
		out = append(out, rec)
	}
	return out
}
