package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
)

// caller is who is calling through HTTP. Subject and Session are filled when
// the request carries a valid session cookie (see session.go).
func (s *Server) caller(c echo.Context) toolkit.Caller {
	caller := toolkit.Caller{Door: toolkit.DoorHTTP, Address: ClientAddress(c.Request(), s.deps.Config.Public, s.deps.Config.TrustedProxies)}
	if sess, ok := s.session(c); ok {
		caller.Subject, caller.Session = sess.Subject, sess.ID
	}
	return caller
}

// toolHandler is the thin door from a route onto its tool: the input is the
// path parameters, the query (typed by the tool's input schema) and, for a
// body, the JSON object; the answer is the tool's result.
func (s *Server) toolHandler(r Route) echo.HandlerFunc {
	return func(c echo.Context) error {
		tool, ok := s.deps.Registry.Get(r.Tool)
		if !ok {
			return errs.Newf(errs.Internal, "route %s has no tool %s", r.Path, r.Tool)
		}
		input, err := s.toolInput(c, tool, r)
		if err != nil {
			return err
		}
		call := toolkit.Call{Input: input, Caller: s.caller(c)}
		if tool.Long && acceptsEventStream(c.Request()) {
			return s.streamTool(c, tool.Name, call)
		}
		out, err := s.deps.Registry.Call(c.Request().Context(), tool.Name, call)
		if err != nil {
			return err
		}
		return writeJSON(c, http.StatusOK, out)
	}
}

// noInput is the input of a request that carries none.
var noInput = json.RawMessage(`{}`)

// toolInput assembles a tool's input object from the request.
func (s *Server) toolInput(c echo.Context, tool *toolkit.Tool, r Route) (json.RawMessage, error) {
	req := c.Request()
	if (req.Method == http.MethodGet || req.Method == http.MethodHead) && len(c.ParamNames()) == 0 && req.URL.RawQuery == "" {
		return noInput, nil
	}
	props := s.queryTypes(tool)
	obj := map[string]any{}
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		var body map[string]json.RawMessage
		raw, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, decodeError(err)
		}
		if len(bytes.TrimSpace(raw)) > 0 {
			req.Body = io.NopCloser(bytes.NewReader(raw))
			if err := decodeBody(c, &body); err != nil {
				return nil, err
			}
			if body == nil {
				return nil, errs.New(errs.BadInput, "the body must be a JSON object")
			}
			for k, v := range body {
				obj[k] = v
			}
		}
	}
	for _, name := range c.ParamNames() {
		obj[name] = c.Param(name)
	}
	for name, values := range req.URL.Query() {
		if slices.Contains(r.Query, name) {
			continue
		}
		if _, inBody := obj[name]; inBody {
			return nil, errs.Newf(errs.BadInput, "%s is given twice, in the query and the body", name)
		}
		typ, known := props[name]
		if !known {
			return nil, errs.Newf(errs.BadInput, "unknown query parameter %s", name).WithHint("see the tool's input schema at /api/v1/openapi.json")
		}
		v, err := typedQueryValue(name, typ, values)
		if err != nil {
			return nil, err
		}
		obj[name] = v
	}
	return json.Marshal(obj)
}

func decodeError(err error) error {
	var tooBig *BodyTooLargeError
	if errors.As(err, &tooBig) {
		return errs.Newf(errs.BadInput, "the body is larger than %s", tooBig.Limit).WithHint("send a smaller body")
	}
	if e, ok := errs.As(err); ok {
		return e // the body's own refusal, like its deadline
	}
	return errs.New(errs.BadInput, "the body could not be read").WithCause(err)
}

// queryTypes is schemaProperties of tool's input, read once per tool.
func (s *Server) queryTypes(tool *toolkit.Tool) map[string]string {
	if props, ok := s.props.Load(tool.Name); ok {
		return props.(map[string]string)
	}
	props := schemaProperties(tool.Input)
	s.props.Store(tool.Name, props)
	return props
}

// schemaProperties maps each top-level property of an object schema to its
// JSON type ("string" when the schema does not say).
func schemaProperties(schema json.RawMessage) map[string]string {
	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(schema, &s)
	out := map[string]string{}
	for name, p := range s.Properties {
		switch t := p.Type.(type) {
		case string:
			out[name] = t
		case []any:
			for _, x := range t {
				if ts, ok := x.(string); ok && ts != "null" {
					out[name] = ts
					break
				}
			}
		}
		if out[name] == "" {
			out[name] = "string"
		}
	}
	return out
}

func typedQueryValue(name, typ string, values []string) (any, error) {
	if typ != "array" && len(values) > 1 {
		return nil, errs.Newf(errs.BadInput, "query parameter %s is given more than once", name)
	}
	v := values[0]
	switch typ {
	case "integer":
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, errs.Newf(errs.BadInput, "query parameter %s: expected a whole number, got %q", name, v)
		}
		return n, nil
	case "number":
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return nil, errs.Newf(errs.BadInput, "query parameter %s: expected a number, got %q", name, v)
		}
		return json.Number(v), nil
	case "boolean":
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, errs.Newf(errs.BadInput, "query parameter %s: expected true or false, got %q", name, v)
		}
		return b, nil
	case "array":
		var out []string
		for _, x := range values {
			for _, part := range strings.Split(x, ",") {
				if part = strings.TrimSpace(part); part != "" {
					out = append(out, part)
				}
			}
		}
		return out, nil
	}
	return v, nil
}

func acceptsEventStream(r *http.Request) bool {
	return strings.Contains(r.Header.Get(echo.HeaderAccept), "text/event-stream")
}

// streamTool runs a long tool with its progress as SSE events, then one
// result event, or an error event in the contract's error shape.
func (s *Server) streamTool(c echo.Context, name string, call toolkit.Call) error {
	done, err := s.openStream(call.Caller.Address)
	if err != nil {
		return err
	}
	defer done()
	defer s.streaming("tool")()
	sse := newSSE(c)
	var mu sync.Mutex
	call.Progress = func(p toolkit.Progress) {
		mu.Lock()
		defer mu.Unlock()
		_ = sse.event("progress", "", p)
	}
	out, err := s.deps.Registry.Call(c.Request().Context(), name, call)
	mu.Lock()
	defer mu.Unlock()
	if err != nil {
		e := toPetalError(err)
		if StatusOf(e.Code) >= 500 && e.Code != errs.SourceFailed {
			// The status line went out long ago; the error event is all the
			// caller sees, so the detail goes to the log as errorHandler's would.
			s.deps.Log.ErrorContext(c.Request().Context(), "tool failed inside its stream", "tool", name, "err", err)
		} else if e.Cause != nil {
			s.deps.Log.WarnContext(c.Request().Context(), "tool refused inside its stream", "tool", name, "code", e.Code, "err", e.Cause)
		}
		return sse.event("error", "", e.Detail())
	}
	return sse.event("result", "", out)
}

// sseWriter writes Server-Sent Events, flushing each one.
type sseWriter struct {
	c       echo.Context
	rc      *http.ResponseController
	started bool
}

func newSSE(c echo.Context) *sseWriter {
	return &sseWriter{c: c, rc: http.NewResponseController(c.Response().Writer)}
}

func (w *sseWriter) start() {
	if w.started {
		return
	}
	w.started = true
	h := w.c.Response().Header()
	h.Set(echo.HeaderContentType, "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	// A stream outlives any write deadline the server sets for plain answers.
	_ = w.rc.SetWriteDeadline(time.Time{})
	w.c.Response().WriteHeader(http.StatusOK)
}

// event writes one event; id is omitted when empty. JSON data carries
// tools_version like every other JSON answer.
func (w *sseWriter) event(name, id string, data any) error {
	w.start()
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	return w.raw(name, id, withToolsVersion(b))
}

func (w *sseWriter) raw(name, id string, data []byte) error {
	return w.write(sseFrame(name, id, data))
}

// write sends one or more whole frames and flushes them.
func (w *sseWriter) write(frames []byte) error {
	w.start()
	if _, err := w.c.Response().Write(frames); err != nil {
		return err
	}
	return w.rc.Flush()
}

// sseFrame is one event as SSE: id (omitted when empty), event name, and
// data split into lines.
func sseFrame(name, id string, data []byte) []byte {
	b := make([]byte, 0, len(data)+len(name)+len(id)+32)
	if id != "" {
		b = append(append(append(b, "id: "...), id...), '\n')
	}
	if name != "" {
		b = append(append(append(b, "event: "...), name...), '\n')
	}
	for {
		line, rest, more := bytes.Cut(data, []byte("\n"))
		b = append(append(append(b, "data: "...), line...), '\n')
		if !more {
			break
		}
		data = rest
	}
	return append(b, '\n')
}
