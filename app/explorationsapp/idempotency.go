package explorationsapp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/canon"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/explorations"
)

// once runs a create at most once per caller and Idempotency-Key: the same
// key with the same input answers what the first request answered; with
// another input it is a conflict. The input's fingerprint is the SHA-256 of
// its canonical JSON, so the order of its fields does not matter. The caller
// is the one the request came as: create opens a session, if it needs one,
// only after the key was looked up, so a caller without a session (a client
// that keeps no cookies) is known by its address both times.
func once[T any](ctx context.Context, s *ExplorationService, call *toolkit.Call, tool string, create func() (T, error)) (T, error) {
	var none T
	key := call.IdempotencyKey
	if key == "" {
		return create()
	}
	if err := explorations.CheckIdempotencyKey(key); err != nil {
		return none, err
	}
	who := call.Caller.Subject
	if who == "" {
		who = "address:" + call.Caller.Address
	}
	input := call.Input
	if len(strings.TrimSpace(string(input))) == 0 {
		input = json.RawMessage(`{}`)
	}
	canonical, err := canon.Transform(input)
	if err != nil {
		return none, errs.Newf(errs.BadInput, "the body is not valid JSON: %s", err.Error())
	}
	sum := sha256.Sum256(append([]byte(tool+"\n"), canonical...))
	fingerprint := hex.EncodeToString(sum[:])
	prior, err := s.store.ReserveIdempotency(ctx, who, key, fingerprint, s.now())
	if err != nil {
		return none, err
	}
	if prior != nil {
		switch {
		case prior.Fingerprint != fingerprint:
			return none, errs.New(errs.Conflict, "this Idempotency-Key was already used for a different request",
				"send a new Idempotency-Key for a new request, or the same body to get the first answer again")
		case prior.Answer == nil:
			return none, errs.New(errs.Conflict, "a request with this Idempotency-Key is still running",
				"wait for it, then send the same request again to get its answer")
		}
		// The first answer, as it was written: T is what it was written from.
		var first T
		if err := json.Unmarshal(prior.Answer, &first); err != nil {
			return none, errs.New(errs.Internal, "the first answer to this Idempotency-Key could not be read").WithCause(err)
		}
		return first, nil
	}
	out, err := create()
	if err != nil {
		wctx, cancel := toolkit.Detached(ctx)
		defer cancel()
		if rerr := s.store.ReleaseIdempotency(wctx, who, key); rerr != nil {
			return none, errs.New(errs.Internal, "the request failed and its Idempotency-Key could not be freed").WithCause(rerr)
		}
		return none, err
	}
	b, err := json.Marshal(out)
	if err != nil {
		return none, err
	}
	wctx, cancel := toolkit.Detached(ctx)
	defer cancel()
	if err := s.store.KeepIdempotentAnswer(wctx, who, key, b); err != nil {
		return none, err
	}
	// create opened a session: the answer is the session's too, so the
	// same key sent with the cookie it was given answers it as well.
	if opened := call.Caller.Subject; opened != "" && opened != who {
		prior, err := s.store.ReserveIdempotency(wctx, opened, key, fingerprint, s.now())
		if err == nil && prior == nil {
			err = s.store.KeepIdempotentAnswer(wctx, opened, key, b)
		}
		if err != nil {
			return none, err
		}
	}
	return out, nil
}
