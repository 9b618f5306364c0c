package httpapi

import (
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/petal-near/petal/domain/errs"
)

// utf8Reader passes bytes through, failing with bad_input at the first byte
// that is not UTF-8. A rune split across two reads is held back until it is
// whole, so chunk boundaries never matter.
type utf8Reader struct {
	r     io.Reader
	carry []byte // the start of a rune whose end has not been read yet
	at    int64  // bytes checked so far, for the message
	err   error  // once the body is found not UTF-8, every read says so
}

// Read passes on only the bytes before an invalid one, and the error stays,
// so a decoder that has read a whole value meanwhile still sees it.
func (u *utf8Reader) Read(p []byte) (int, error) {
	if u.err != nil {
		return 0, u.err
	}
	n, err := u.r.Read(p)
	b := p[:n]
	if len(u.carry) > 0 && len(b) > 0 {
		var joined [2 * utf8.UTFMax]byte
		k := copy(joined[:], u.carry)
		k += copy(joined[k:], b[:min(len(b), utf8.UTFMax)])
		if !utf8.FullRune(joined[:k]) {
			u.carry = append(u.carry, b...)
			b = nil
		} else {
			r, size := utf8.DecodeRune(joined[:k])
			if r == utf8.RuneError && size <= 1 {
				return 0, u.notUTF8(0)
			}
			b = b[size-len(u.carry):]
			u.at += int64(size)
			u.carry = u.carry[:0]
		}
	}
	keep := 0
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				keep = len(b) - i
			}
			break
		}
	}
	whole := b[:len(b)-keep]
	if !utf8.Valid(whole) {
		i := 0
		for i < len(whole) {
			r, size := utf8.DecodeRune(whole[i:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			i += size
		}
		return n - len(b) + i, u.notUTF8(int64(i))
	}
	u.at += int64(len(whole))
	u.carry = append(u.carry, b[len(b)-keep:]...)
	if errors.Is(err, io.EOF) && len(u.carry) > 0 {
		return n, u.notUTF8(0)
	}
	return n, err
}

func (u *utf8Reader) notUTF8(offset int64) error {
	u.err = errs.Newf(errs.BadInput, "the body is not valid UTF-8 (at byte %d)", u.at+offset).WithHint("send JSON encoded as UTF-8")
	return u.err
}

// BodyTooLargeError is what a size-capped body reader fails with past its
// cap, as the cause of the bad_input refusal bodyTooLarge makes.
type BodyTooLargeError struct{ Limit string }

func (e *BodyTooLargeError) Error() string { return fmt.Sprintf("body larger than %s", e.Limit) }

// bodyTooLarge is the refusal of a body past its cap, in the contract's
// shape, so whatever reads the body (the app included) passes it on as is.
func bodyTooLarge(limit string) error {
	return errs.Newf(errs.BadInput, "the body is larger than %s", limit).WithHint("send a smaller body").WithCause(&BodyTooLargeError{Limit: limit})
}
